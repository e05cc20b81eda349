"""The window and compiler logs: a dropped compiler log is explained (a ``.toml`` spec opens in the form instead,
anything else is refused), and the explanation panes' "Save bug report…" buttons write a job's bundle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDropEvent

from neffbench.gui.shell.tabs import COMPILE_TAB

ACCEPTED = "a spec (.toml), a compiler log or a job folder"


class DropHandler(QObject):
    """The one handler of every drop on the main window, whichever widget is under the cursor: it filters the
    window's QWindow, which gets each drag event before any widget does, so a line edit never takes a dropped file
    as text and a log view never "explains" an image. The callbacks decide what a dropped path does; what is
    neither a spec nor a compiler log is refused in one sentence (``refuse``)."""

    def __init__(
        self,
        parent: QObject,
        *,
        open_spec: Callable[[str], object],
        explain: Callable[[str], object],
        refuse: Callable[[str], object],
    ):
        super().__init__(parent)
        self.open_spec, self.explain, self.refuse = open_spec, explain, refuse

    def handle(self, path: str) -> None:
        from neffbench.compilerlog.explain import not_a_log

        if Path(path).suffix.lower() == ".toml":
            self.open_spec(path)
            return
        why = not_a_log(path)
        if why is None:
            self.explain(path)
        else:
            self.refuse(f"Not opened: {why}; drop {ACCEPTED} instead.")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind not in _DRAGS:
            return False
        if kind == QEvent.Type.DragLeave:
            return True
        assert isinstance(event, QDropEvent)  # a drag's enter, move and drop events are
        if not event.mimeData().hasUrls():  # text dragged from another program still edits a field as usual
            return False
        if kind == QEvent.Type.Drop:
            urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
            if urls:
                self.handle(urls[0])
            else:
                self.refuse(f"Not opened: only files on this machine can be dropped; drop {ACCEPTED}.")
        event.acceptProposedAction()
        return True


_DRAGS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.DragLeave, QEvent.Type.Drop)


def install(window) -> None:
    """Wire drops and bug reports into a MainWindow whose panels are built."""
    from neffbench.gui.shell.bug_report import BugReportSaver

    window.bug_reports = BugReportSaver(window)
    for view in (window.panels.compile.explanation, window.panels.artifacts.explanation):
        view.bug_report_requested.connect(window.bug_reports.save)
    window.explain_action.triggered.connect(lambda: ask_and_explain(window))
    window.drops = DropHandler(
        window,
        open_spec=window.open_spec,
        explain=window.explain_log,
        refuse=lambda text: window.statusBar().showMessage(text, 10_000),
    )
    window.setAcceptDrops(True)
    window.winId()  # the QWindow exists from here on, shown or not
    window.windowHandle().installEventFilter(window.drops)


def explain_log(window, path: str) -> None:
    """Explain a compiler log (or a job directory's) in the Compile tab."""

    window.tabs.setCurrentIndex(COMPILE_TAB)
    panel = window.panels.compile
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
