"""Runs a Compare on a Python thread (its children are the tapped compile and two runs) and re-emits what it
reports as Qt signals on the GUI thread."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from neffbench.gui.widgets.threaded import LineBuffer, ThreadedController
from neffbench.numerics.compare import Compare, CompareError

log = logging.getLogger(__name__)


class _CompareLoop(QObject):
    """Lives on the GUI thread, runs on the compare's: ``Compare.run`` blocks there, never on the GUI thread."""

    step_changed = Signal(str)
    finished = Signal(object)  # CompareResult
    failed = Signal(str)

    def __init__(self, compare: Compare):
        super().__init__()
        self.compare = compare
        compare.on_step = self.step_changed.emit

    @Slot()
    def run(self) -> None:
        try:
            self.finished.emit(self.compare.run())
        except CompareError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - reported to the user; the view must return to idle
            log.exception("compare failed")
            self.failed.emit(f"{type(exc).__name__}: {exc}")


class CompareController(ThreadedController):
    """One compare at a time. ``finished(result)``, ``failed(sentence)`` or ``cancelled()`` ends each one, once
    its thread (and so every child it started) is done."""

    _loop: _CompareLoop | None

    started = Signal(str)  # the job directory
    step_changed = Signal(str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._outcome: tuple[str, Any] | None = None
        self._cancelling = False
        self.job_dir: str | None = None

    @property
    def is_cancelling(self) -> bool:
        return self._cancelling

    def start(self, job_dir: str, options: dict[str, Any]) -> None:
        """``options``: Compare's ``patterns``, ``depth`` and ``runtime``."""
        if self.is_running:
            self.failed.emit("A compare is already running; wait for it or cancel it first.")
            return
        if not (Path(job_dir) / "job.json").is_file():
            self.failed.emit(f"{job_dir} is not a job directory (it has no job.json).")
            return
        self._buffer = LineBuffer()
        compare = Compare(Path(job_dir), on_line=self._buffer.append, **options)
        loop = _CompareLoop(compare)
        loop.step_changed.connect(self.step_changed)
        loop.finished.connect(self._on_loop_finished)
        loop.failed.connect(self._on_loop_failed)
        self._outcome, self._cancelling, self.job_dir = None, False, job_dir
        self._launch(loop, "neffbench-compare", lambda: self.started.emit(job_dir))

    def cancel(self) -> None:
        """Asks the compare to stop (never blocks): its running child is terminated; ``cancelled`` follows."""
        if self._loop is None or self._cancelling:
            return
        self._cancelling = True
        self.step_changed.emit("Cancelling…")
        self._loop.compare.cancel()

    def _on_loop_finished(self, result) -> None:
        self._outcome = ("finished", result)

    def _on_loop_failed(self, message: str) -> None:
        self._outcome = ("failed", message)

    def _ended(self, loop) -> None:
        outcome, cancelling = self._outcome, self._cancelling
        self._outcome, self._cancelling = None, False
        if cancelling:
            # Whatever the last step said (a compile "cancelled", or a result that came in as Cancel was
            # pressed), the user asked for it to stop.
            self.cancelled.emit()
        elif outcome is None:
            self.failed.emit("The compare ended without a result.")
        elif outcome[0] == "finished":
            self.finished.emit(outcome[1])
        else:
            self.failed.emit(outcome[1])
