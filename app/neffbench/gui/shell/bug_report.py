"""Save bug report…: the job's bundle (``neffbench bundle``) written where the user chooses, in the background."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from neffbench.jobs.summary import human_bytes
from neffbench.words import plural

if TYPE_CHECKING:
    from neffbench.gui.widgets.background import Task


def bundle_summary(result) -> str:
    total = result.path.stat().st_size
    text = f"Saved {result.path} ({human_bytes(total)}, {plural(len(result.included), 'file')})."
    own = [n for n, _ in result.included if n.split("/")[1:2] == ["sources"]]
    if own:
        text += f"\nIt includes {plural(len(own), 'file')} of your own (the job's source closure), unchanged."
    if result.left_out:
        text += "\nLeft out: " + "; ".join(f"{p} ({human_bytes(s)}): {why}" for p, s, why in result.left_out)
    return text


class BugReportSaver:
    """Asks where to save, then zips the job in a worker thread and says what went in."""

    def __init__(self, parent: QWidget):
        self.parent = parent
        self.ask_path = self._ask_path  # tests replace it
        self.tell = self._tell
        self._worker: Task | None = None
        self.last_result = None

    def save(self, job_dir: str) -> None:
        from neffbench.gui.widgets import background
        from neffbench.jobs.bundle import make_bundle

        job = Path(job_dir)
        out = self.ask_path(str(job.parent / f"{job.name}-bugreport.zip"))
        if not out:
            return
        # The dialog already asked before replacing a file.
        self._worker = background.start(
            make_bundle, job, out, force=True, returned=self._on_returned, errored=self._on_errored
        )

    def _ask_path(self, suggested: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self.parent, "Save bug report", suggested, "Zip files (*.zip)")
        return path

    def _on_returned(self, result) -> None:
        self.last_result = result
        self.tell("Bug report saved", bundle_summary(result), error=False)

    def _on_errored(self, exc: Exception) -> None:
        self.tell("Bug report not saved", str(exc), error=True)

    def _tell(self, title: str, text: str, *, error: bool) -> None:
        box = QMessageBox.warning if error else QMessageBox.information
        box(self.parent, title, text)
