"""A workbench window that starts a compile and then just runs, for tests that SIGKILL it mid-job.

``python tests/survive/window_compile.py WORKDIR SETTINGS.ini [--give-up-after S]``: builds
``MainWindow`` (offscreen when no display is asked for), compiles the seed preset into WORKDIR,
prints one line saying whether the compile started, and runs the Qt event loop. The test kills it
with SIGKILL; ``--give-up-after`` (default 300 s) is only a safety net so that a test that failed
before its kill never leaves a window running.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir")
    parser.add_argument("settings")
    parser.add_argument("--give-up-after", type=float, default=300.0)
    args = parser.parse_args(argv)

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([sys.argv[0]])
    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings
    from neffbench.gui.widgets import theme
    from neffbench.presets import load_preset

    theme.configure_plots()
    window = MainWindow(Settings.at(args.settings), background=False)
    window.set_workdir(args.workdir, rescan=False)
    window.form.set_spec(load_preset("seed"))
    window.build_panels()
    window.show()
    window.compile()
    started = window.panels_ready and window.controllers.compile.is_running
    print(f"window pid {os.getpid()}: compile {'started' if started else 'NOT started'}", flush=True)
    if not started:
        return 1
    QTimer.singleShot(int(args.give_up_after * 1000), lambda: os._exit(3))
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
