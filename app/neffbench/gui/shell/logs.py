"""The window and compiler logs: a dropped file is explained (a ``.toml`` spec opens in the form instead),
and the explanation panes' "Save bug report…" buttons write a job's bundle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject

from neffbench.gui.shell.tabs import COMPILE_TAB


class DropHandler(QObject):
    """An event filter for the main window; the callbacks decide what a dropped path does."""

    def __init__(self, parent: QObject, *, open_spec: Callable[[str], object], explain: Callable[[str], object]):
        super().__init__(parent)
        self.open_spec, self.explain = open_spec, explain

    def handle(self, path: str) -> None:
        if Path(path).suffix.lower() == ".toml":
            self.open_spec(path)
        else:
            self.explain(path)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and event.mimeData().hasUrls():
            event.acceptProposedAction()
            return True
        if kind == QEvent.Type.Drop:
            urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
            if urls:
                self.handle(urls[0])
                event.acceptProposedAction()
                return True
        return False


def install(window) -> None:
    """Wire drops and bug reports into a MainWindow whose panels are built."""
    from neffbench.gui.shell.bug_report import BugReportSaver

    window.bug_reports = BugReportSaver(window)
    for view in (window.compile_panel.explanation, window.artifacts.explanation):
        view.bug_report_requested.connect(window.bug_reports.save)
    window.explain_action.triggered.connect(lambda: ask_and_explain(window))
    window.drops = DropHandler(window, open_spec=window.open_spec, explain=window.explain_log)
    window.setAcceptDrops(True)
    window.installEventFilter(window.drops)


def explain_log(window, path: str) -> None:
    """Explain a compiler log (or a job directory's) in the Compile tab."""

    window.tabs.setCurrentIndex(COMPILE_TAB)
    panel = window.compile_panel
    panel.log_tabs.setCurrentWidget(panel.explanation)
    panel.explanation.explain_path(path)


def ask_and_explain(window) -> None:
    """Explain a log…: a file chosen in a dialog (any log; a job's job.log gets its job's bug report too)."""
    from PySide6.QtWidgets import QFileDialog

    path, _ = QFileDialog.getOpenFileName(
        window, "Explain a compiler log", str(window.workdir), "Logs (*.txt *.log);;All files (*)"
    )
    if path:
        explain_log(window, path)
