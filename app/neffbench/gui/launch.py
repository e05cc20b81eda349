"""Start the Qt application and show the workbench window (placeholder until the window lands)."""

from __future__ import annotations

import sys


def launch(argv: list[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    label = QLabel("NEFF Workbench")
    label.setWindowTitle("NEFF Workbench")
    label.resize(480, 240)
    label.show()
    return app.exec()
