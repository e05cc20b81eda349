"""A window of its own showing any of a job's log files whole: ``job.log``, ``events.jsonl``, the compiler's logs.

The file is read in slices on a timer and handed to the compile tab's LogView (levels, search, error codes), so a
million-line log fills the view without a stall and the window answers while it does.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import TextIO

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from neffbench.gui.compile.log_view import MAX_BACKLOG, LogView
from neffbench.jobs.log_files import log_files

# A whole log fits (a verbose neuronx-cc log of a large model runs to a few hundred thousand lines); beyond it the
# view keeps the newest lines and its footer says so.
MAX_LINES = 2_000_000
SLICE = 5_000  # lines read per tick, while the view has room for them


class LogFilesWindow(QWidget):
    """One job's log files, one shown at a time; :meth:`show_job` points it at a job."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("logFilesWindow")
        self.job_dir: Path | None = None
        self._file: TextIO | None = None
        self.files = QComboBox(toolTip="The job's log files: its log, its events, the compiler's own logs.")  # type: ignore[call-arg]  # a Qt property keyword
        self.files.setObjectName("logFiles")
        self.reload_button = QPushButton("Reload", toolTip="Read the file again from its start.")
        self.view = LogView(self, max_lines=MAX_LINES)
        self.view.open_log_button.hide()  # this window is where a log is opened
        top = QHBoxLayout()
        top.addWidget(QLabel("File"))
        top.addWidget(self.files, 1)
        top.addWidget(self.reload_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self._reader = QTimer(self)
        self._reader.timeout.connect(self._on_reader_timeout)
        self.files.currentIndexChanged.connect(self._on_files_current_index_changed)
        self.reload_button.clicked.connect(self._on_reload_button_clicked)
        self.resize(1000, 640)

    def show_job(self, job_dir: Path, name: str = "job.log") -> None:
        """List ``job_dir``'s log files, show ``name`` (or the first there is) and raise the window."""
        self.job_dir = job_dir
        self.setWindowTitle(f"Logs of {job_dir.name}")
        names = [str(p) for p in log_files(job_dir)]
        self.files.blockSignals(True)
        self.files.clear()
        self.files.addItems(names)
        self.files.setCurrentIndex(names.index(name) if name in names else 0)
        self.files.blockSignals(False)
        if not names:
            self.view.clear()
            self.view.text.setPlaceholderText(f"{job_dir} holds no log files.")
        else:
            self._open(self.files.currentText())
        self.show()
        self.raise_()
        self.activateWindow()

    @property
    def reading(self) -> bool:
        """Whether the file is still being read into the view."""
        return self._file is not None or self.view.pending > 0

    def _open(self, name: str) -> None:
        self._close()
        assert self.job_dir is not None
        path = self.job_dir / name
        self.view.clear(path)
        try:
            self._file = path.open(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.view.text.setPlaceholderText(f"Cannot read {path}: {exc.strerror or exc}")
            return
        self._reader.start(10)

    def _close(self) -> None:
        self._reader.stop()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _on_reader_timeout(self) -> None:
        if self._file is None or self.view.pending > MAX_BACKLOG - SLICE:
            return  # the view has not shown the last slice yet: its backlog would drop lines
        lines = [line.rstrip("\n") for line in islice(self._file, SLICE)]
        if lines:
            self.view.append_lines(lines, streaming=False)
        if len(lines) < SLICE:
            self._close()

    def _on_files_current_index_changed(self, index: int) -> None:
        if index >= 0:
            self._open(self.files.itemText(index))

    def _on_reload_button_clicked(self) -> None:
        if self.files.currentIndex() >= 0:
            self._open(self.files.currentText())

    def closeEvent(self, event) -> None:
        self._close()
        super().closeEvent(event)


def show_job_logs(job_dir: Path, near: QWidget, name: str = "job.log") -> LogFilesWindow:
    """The logs window of ``near``'s top-level window (one per window, made on first use), showing ``job_dir``."""
    top = near.window()
    window = top.findChild(LogFilesWindow, "logFilesWindow")
    if window is None:
        window = LogFilesWindow(top)
    window.show_job(job_dir, name)
    return window
