"""Runs a NeffRun on a Python thread (start and the blocking wait there) and re-emits what it reports as Qt signals."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from neffbench.gui.widgets.threaded import LineBuffer, ThreadedController
from neffbench.runs.neff_run import NeffRun, RunResult
from neffbench.runs.subject import SubjectError, resolve

log = logging.getLogger(__name__)


class _RunLoop(QObject):
    """Runs on the run thread: ``NeffRun.start`` and the blocking ``wait``, never on the GUI thread."""

    started = Signal(str)
    event_received = Signal(dict)
    finished = Signal(object)  # RunResult, or None when the runner itself raised
    failed = Signal(str)
    done = Signal()

    def __init__(self, runner: NeffRun):
        super().__init__()
        self.runner = runner

    @Slot()
    def run(self) -> None:
        try:
            path = self.runner.start()
            self.started.emit(str(path))
            # Returns once the child's process group is gone: ``finished`` means nothing of the run is left.
            self.finished.emit(self.runner.wait())
        except Exception as exc:  # noqa: BLE001 - reported to the user; the UI must return to idle
            log.exception("run failed")
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.done.emit()


class RunController(ThreadedController):
    """Starts and cancels runs; everything it reports arrives as signals on the GUI thread.

    ``status_changed`` says "Running…", "Cancelling…" (from Cancel until the child's process group is
    gone) and then the outcome ("Cancelled", "Succeeded", "Failed").
    """

    _loop: _RunLoop | None

    started = Signal(str)  # the run record's path (renamed for the runtime once an ``auto`` run has chosen)
    event_received = Signal(dict)
    finished = Signal(object)  # RunResult
    failed = Signal(str)  # nothing started: a SubjectError or ValueError sentence (or the runner raised)
    status_changed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._result: RunResult | None = None
        self._error: str | None = None
        self._cancelling = False

    @property
    def is_cancelling(self) -> bool:
        return self._cancelling

    def start(self, target_path: str, options: dict[str, Any] | None = None) -> None:
        """Resolves the target here (a few small reads) and starts the run thread; ``failed`` when it cannot."""
        if self.is_running:
            self.failed.emit("A run is already going; wait for it or cancel it first.")
            return
        self._buffer = LineBuffer()
        try:
            subject = resolve(target_path)
            runner = NeffRun(subject, **(options or {}), on_line=self._buffer.append)
        except (SubjectError, ValueError) as exc:
            self.failed.emit(str(exc))
            return
        except TypeError as exc:  # an option NeffRun does not take
            self.failed.emit(f"The run options are not understood: {exc}.")
            return
        loop = _RunLoop(runner)
        runner.on_event = loop.event_received.emit
        loop.started.connect(self._on_loop_started)
        loop.event_received.connect(self.event_received)
        loop.finished.connect(self._on_loop_finished)
        loop.failed.connect(self._on_loop_failed)
        self._result, self._error, self._cancelling = None, None, False
        self._launch(loop, "neffbench-run", lambda: self.status_changed.emit("Running…"))

    def cancel(self) -> None:
        """Asks the run to stop (never blocks); ``finished`` follows once the child's process group is gone."""
        if self._loop is None or self._cancelling:
            return
        self._cancelling = True
        self.status_changed.emit("Cancelling…")
        self._loop.runner.cancel()

    def _on_loop_started(self, path: str) -> None:
        self.started.emit(path)

    def _on_loop_finished(self, result: RunResult) -> None:
        self._result = result

    def _on_loop_failed(self, message: str) -> None:
        self._error = message

    def _ended(self, loop) -> None:
        result, error = self._result, self._error
        self._result = self._error = None
        self._cancelling = False
        if result is None:
            self.status_changed.emit("Failed")
            self.failed.emit(error or "The run ended without a result.")
            return
        self.status_changed.emit(result.outcome.capitalize())
        self.finished.emit(result)
