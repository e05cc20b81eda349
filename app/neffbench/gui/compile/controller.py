"""Runs the compile pipeline's bucket loop on a Python thread and re-emits its output as Qt signals."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from neffbench.gui.widgets.threaded import LineBuffer, ThreadedController
from neffbench.jobs import JobResult
from neffbench.jobs.buckets import BucketLoop, run_outcome

log = logging.getLogger(__name__)


@dataclass
class CompileRun:
    """What a compile of all buckets came to."""

    spec: Any
    results: list[JobResult] = field(default_factory=list)
    error: str | None = None  # the controller itself failed (not a job)
    cancelled: bool = False

    @property
    def outcome(self) -> str:
        return "failed" if self.error else run_outcome(self.results, self.cancelled)

    @property
    def cpu_check_only(self) -> bool:
        """Every job ran the CPU check: whatever the outcome, nothing was compiled for Neuron."""
        return bool(self.results) and not any(r.view.makes_neff for r in self.results)

    @property
    def served_from_cache(self) -> int:
        """How many of its jobs an identical earlier job served: nothing was compiled for them."""
        return sum(bool(r.view.cache_hit) for r in self.results)

    @property
    def headline(self) -> str:
        """A short, honest status line: a cpu-check run never reads as a compile, nor a cache hit."""
        what = "CPU check (no NEFF)" if self.cpu_check_only else "Compile"
        cached = self.served_from_cache
        if cached and cached == len(self.results) and self.outcome == "succeeded":
            return f"{what} served from the cache"
        return f"{what} {self.outcome}"


class _CompileLoop(QObject):
    """Runs on the compile thread: the CLI's bucket loop (:class:`neffbench.jobs.buckets.BucketLoop`), blocking
    there, never on the GUI thread; what it reports is re-emitted as signals."""

    job_started = Signal(object, str)  # bucket (a dict of axis values), job directory
    event_received = Signal(dict)
    job_finished = Signal(object)
    failed = Signal(str)
    done = Signal()

    def __init__(self, spec: Any, workdir: Path, buffer: LineBuffer, backend: str, use_cache: bool = True):
        super().__init__()
        self.spec = spec
        self.workdir = workdir
        self.buffer = buffer
        self._buckets = BucketLoop(
            spec,
            workdir=workdir,
            backend=backend,
            timeout=spec.compiler.timeout,
            on_line=buffer.append,
            on_event=self.event_received.emit,
            use_cache=use_cache,
            on_job_started=self._on_job_started,
            on_job_finished=self.job_finished.emit,
            record_skipped=False,
        )

    def _on_job_started(self, bucket: dict, job_dir: Path) -> None:
        self.job_started.emit(bucket, str(job_dir))

    @Slot()
    def run(self) -> None:
        try:
            prepared = self._prepare()
            if prepared is None:
                return
            self._buckets.prepared = prepared
            self._buckets.run()
        except Exception as exc:  # noqa: BLE001 - reported to the user; the UI must return to idle
            log.exception("compile failed")
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.done.emit()

    def _prepare(self) -> Any:
        """What the build reads and whether it can work, before any job starts (the window's warm probe runs the
        user's code, never this process); None, with the problem reported, when it cannot."""
        from neffbench.jobs.prepare import prepare
        from neffbench.probe.client import shared

        prepared = prepare(self.spec, self.workdir, shared().ask)
        if not prepared.problems:
            return prepared
        self.failed.emit(f"the module cannot be built: {prepared.problems[0]}; nothing was started")
        return None

    def cancel(self) -> None:
        """Thread-safe and never blocks: stops the running job and any bucket after it."""
        self._buckets.cancel()


class CompileController(ThreadedController):
    """Starts and cancels compiles; everything it reports arrives as signals on the GUI thread."""

    _loop: _CompileLoop | None

    started = Signal(object)  # the spec
    event_received = Signal(dict)
    job_started = Signal(object, str)  # bucket, job directory
    job_finished = Signal(object)  # JobResult
    finished = Signal(object)  # CompileRun

    def __init__(self, parent: QObject | None = None, *, backend: str = "auto"):
        super().__init__(parent)
        self.backend = backend
        self._run: CompileRun | None = None

    def start(self, spec: Any, workdir: str | Path, *, use_cache: bool = True) -> None:
        """Compile every bucket; ``use_cache=False`` compiles even what an identical earlier job made."""
        if self.is_running:
            raise RuntimeError("a compile is already running")
        self._run = CompileRun(spec)
        self._buffer = LineBuffer()
        loop = _CompileLoop(spec, Path(workdir), self._buffer, self.backend, use_cache)
        loop.job_started.connect(self.job_started)
        loop.event_received.connect(self.event_received)
        loop.job_finished.connect(self._on_loop_job_finished)
        loop.failed.connect(self._on_loop_failed)
        self._launch(loop, "neffbench-compile", lambda: self.started.emit(spec))

    @property
    def is_cancelling(self) -> bool:
        """Cancel was asked and the compile has not ended yet."""
        return self._run is not None and self._run.cancelled

    def cancel(self) -> None:
        """Asks the job to stop; ``finished`` follows when it has (SIGKILL after the runner's grace period)."""
        if self._loop is not None and self._run is not None:
            self._run.cancelled = True
            self._loop.cancel()

    def _on_loop_job_finished(self, result: JobResult) -> None:
        self._on_flush_timer_timeout()  # the job's last lines before its result
        assert self._run is not None  # the loop reports on the run it was started for
        self._run.results.append(result)
        self.job_finished.emit(result)

    def _on_loop_failed(self, message: str) -> None:
        assert self._run is not None  # the loop reports on the run it was started for
        self._run.error = message

    def _ended(self, loop) -> None:
        run, self._run = self._run, None
        self.finished.emit(run)
