"""Whether this window has its workdir first (``jobs/workdir_claim.py``), said in the status bar and the title: a
second window on the same workdir says so and leaves the first window's settings be."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar

from neffbench.gui.widgets import theme
from neffbench.jobs.workdir_claim import WorkdirClaim

SECOND = "second window on this workdir"


class WorkdirPresence:
    """The window's claim on its workdir (``claim``), taken again each time the workdir changes, and its label."""

    def __init__(self, bar: QStatusBar, locks: Path):
        self._bar, self._locks = bar, locks
        self.claim: WorkdirClaim | None = None
        self.label = QLabel(SECOND[0].upper() + SECOND[1:])
        self.label.setObjectName("secondWindow")
        self.label.setStyleSheet(f"color: {theme.WARN};")
        self.label.hide()
        bar.addPermanentWidget(self.label)

    @property
    def first(self) -> bool:
        """Whether this window has the workdir first (also before any claim: nothing to share yet)."""
        return self.claim is None or self.claim.first

    def take(self, workdir: Path) -> None:
        self.release()
        self.claim = WorkdirClaim(workdir, self._locks)
        second = not self.claim.take()
        self.label.setVisible(second)
        if second:
            who = f" (process {self.claim.holder})" if self.claim.holder else ""
            tip = (
                f"Another NEFF Workbench window{who} has {workdir} open. Both see every job (each has a folder of its "
                "own); this window's layout and form are not saved when it closes, so the first window's are kept."
            )
            self.label.setToolTip(tip)
            self._bar.showMessage(tip, 15000)

    def title(self, name: str) -> str:
        return name if self.first else f"{name} ({SECOND})"

    def release(self) -> None:
        if self.claim is not None:
            self.claim.release()
