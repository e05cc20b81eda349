"""The memory verdict on the form's spec, above the form: a warning past the free memory, a block past all of it
(with "Compile anyway"), nothing when it fits."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from neffbench.gui.forms.problem_lines import breakable
from neffbench.gui.widgets import theme
from neffbench.jobs.memory_verdict import OK, MemoryVerdict

ALLOW_TEXT = "Compile anyway"


class MemoryNote(QWidget):
    """``allow_toggled`` when the user ticks or clears "Compile anyway"; ``refused()`` says whether Compile may
    start. The tick is cleared whenever the spec stops being blocked, so a later block asks again."""

    allow_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None, *, allow_text: str = ALLOW_TEXT):
        super().__init__(parent)
        self.verdict: MemoryVerdict = OK
        self._override = f'tick "{allow_text}"'
        self.label = QLabel()
        self.label.setObjectName("memory-note")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.allow = QCheckBox(allow_text)
        self.allow.setObjectName("allow-over-memory")
        self.allow.setToolTip("Start it although the estimate says it cannot fit (the estimate may be wrong).")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 0)
        layout.setSpacing(2)
        layout.addWidget(self.label)
        layout.addWidget(self.allow)
        self.allow.toggled.connect(self.allow_toggled)
        self.show_verdict(OK)

    def show_verdict(self, verdict: MemoryVerdict) -> None:
        self.verdict = verdict
        if not verdict.blocks and self.allow.isChecked():
            self.allow.setChecked(False)
        self.setVisible(verdict.level != "ok")
        self.allow.setVisible(verdict.blocks)
        mark = "✖" if verdict.blocks else "⚠"
        self.label.setText(f"{mark} {breakable(self.sentence())}" if verdict.level != "ok" else "")
        colour = theme.PROBLEM_COLOURS["error" if verdict.blocks else "warning"]
        self.label.setStyleSheet(f"color: {colour};")
        self.label.setProperty("severity", verdict.level)

    def judge(self, spec: Any, backend: str, *, valid: bool) -> None:
        """The verdict on ``spec`` compiled with ``backend``; none for a spec with errors (those come first)."""
        from neffbench.jobs.memory_verdict import spec_verdict

        self.show_verdict(spec_verdict(spec, backend) if valid else OK)

    def sentence(self) -> str:
        return self.verdict.sentence(self._override)

    def refused(self) -> bool:
        return self.verdict.refused(self.allow.isChecked())
