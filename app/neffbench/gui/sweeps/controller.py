"""Runs a sweep (``neffbench.sweeps.run_sweep``) on a Python thread and re-emits what it reports as Qt signals."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from neffbench.gui.widgets.threaded import LineBuffer, ThreadedController

log = logging.getLogger(__name__)


@dataclass
class SweepOptions:
    """What the sweep dialog chose besides the grid: every ``run_sweep`` keyword the window offers."""

    executor: str = "local"
    jobs: int = 1
    address: str | None = None
    backend: str = "auto"
    use_cache: bool = True
    strict: bool = False


class _SweepLoop(QObject):
    """Runs on the sweep's thread: ``run_sweep`` blocks there, never on the GUI thread."""

    event_received = Signal(dict)
    failed = Signal(str)
    done = Signal(object)  # the SweepResult, or None when it failed before its end

    def __init__(self, plan: Any, workdir: str, options: SweepOptions, buffer: LineBuffer, labels: dict[int, str]):
        super().__init__()
        self.plan, self.workdir, self.options, self.buffer, self.labels = plan, workdir, options, buffer, labels
        self.cancel_event = threading.Event()

    def _line(self, point: int | None, text: str) -> None:
        self.buffer.append(text if point is None else f"[{self.labels.get(point, point)}] {text}")

    def _prepare_points(self) -> bool:
        """Each distinct build of the user's code checked in the window's warm probe before anything runs; True
        (with the problems reported) when no point can run."""
        from neffbench.jobs.prepare import needed
        from neffbench.probe.client import shared
        from neffbench.sweeps.preparing import prepare_points

        if not any(needed(p.spec) for p in self.plan.valid):
            return False
        prepare_points(self.plan, self.workdir, shared().ask)
        for point in self.plan.invalid:
            for problem in point.errors:
                self._line(point.index, f"neffbench: invalid: {problem.message}")
        if not self.plan.valid:
            self.failed.emit("no point of the sweep can be built; nothing was started")
            return True
        return False

    @Slot()
    def run(self) -> None:
        from neffbench.jobs.records import WorkdirError
        from neffbench.sweeps import SweepError, run_sweep

        result = None
        try:
            o = self.options
            if self._prepare_points():
                return
            result = run_sweep(
                self.plan,
                executor=o.executor,
                jobs=o.jobs,
                address=o.address or None,
                backend=o.backend,
                workdir=self.workdir,
                use_cache=o.use_cache,
                strict=o.strict,
                on_line=self._line,
                on_event=self.event_received.emit,
                cancel_event=self.cancel_event,
            )
        except (SweepError, WorkdirError) as exc:  # nothing started: the sentence says why
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - shown to the user; the window must return to idle
            log.exception("sweep failed")
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.done.emit(result)


class SweepController(ThreadedController):
    """Starts and cancels one sweep at a time; its lines, point states and end arrive as signals."""

    _loop: _SweepLoop | None

    started = Signal(object)  # the plan
    event_received = Signal(dict)  # every event run_sweep reports (sweep_point, sweep_finished, job events)
    failed = Signal(str)  # the sweep could not run (bad workdir, Ray missing): one sentence
    finished = Signal(object)  # the SweepResult, or None after ``failed``

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._result: Any = None
        self.cancelling = False

    def start(self, plan: Any, workdir: str, options: SweepOptions) -> None:
        if self.is_running:
            raise RuntimeError("a sweep is already running")
        self._buffer = LineBuffer()
        self.cancelling = False
        labels = plan.words
        loop = _SweepLoop(plan, workdir, options, self._buffer, labels)
        loop.event_received.connect(self.event_received)
        loop.failed.connect(self.failed)
        loop.done.connect(self._on_loop_done)
        self._launch(loop, "neffbench-sweep", lambda: self.started.emit(plan))

    def cancel(self) -> None:
        """Cancels every point (their jobs end as cancelled); ``finished`` follows once they have."""
        if self._loop is not None:
            self.cancelling = True
            self._loop.cancel_event.set()

    def _on_loop_done(self, result: Any) -> None:
        self._result = result

    def _ended(self, loop) -> None:
        result, self._result = self._result, None
        self.finished.emit(result)
