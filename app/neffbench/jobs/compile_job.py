"""Running a job: start the worker (through :mod:`neffbench.procs`), stream and record its output, cancel it, finalise the record."""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neffbench import procs
from neffbench.backends.registry import CHOICES as BACKENDS
from neffbench.compilerlog.reader import CompilerLog
from neffbench.jobs import prepare, record_start, records
from neffbench.jobs.finish import Finishing, JobResult  # noqa: F401 - JobResult re-exported
from neffbench.jobs.prepare import Prepared
from neffbench.jobs.protocol import PROFILED_REQUEST, TAPS_REQUEST
from neffbench.jobs.standby import StandbyWorker, spawn_worker
from neffbench.jobs.streaming import Streaming
from neffbench.kernels import registry
from neffbench.procs import Child
from neffbench.schema.described import with_held_claims
from neffbench.spec import SpecError, errors, save
from neffbench.usercode import closure as sources

log = logging.getLogger(__name__)

GRACE_S = 5.0  # between SIGTERM and SIGKILL on cancel or timeout
POLL_S = procs.POLL_S
# After the worker has exited, how long a process outside its group may keep the pipe open.
EOF_WAIT_S = procs.EOF_WAIT_S

LineCallback = Callable[[str], None]
EventCallback = Callable[[dict], None]


class CompileJob(Streaming, Finishing):
    """One compile of a single-bucket spec in a child process.

    ``start`` and ``wait`` belong to one thread (the GUI runs them on a QThread; ``on_line`` and
    ``on_event`` are called on that thread). ``cancel`` may be called from any thread at any time,
    also before ``start``.

    A ``standby`` worker, once the runner is constructed, belongs to the runner: ``start`` hands
    the job to it when its backend is this job's, and discards it otherwise (also when cancelled).
    """

    def __init__(
        self,
        spec: Any,
        *,
        workdir: str | Path | None = None,
        backend: str = "auto",
        timeout: float | None = None,
        on_line: LineCallback | None = None,
        on_event: EventCallback | None = None,
        standby: StandbyWorker | None = None,
        use_cache: bool = True,
        prepared: Prepared | None = None,
        taps: dict[str, Any] | None = None,
        profiled: dict[str, Any] | None = None,
        origin: dict[str, Any] | None = None,
    ):
        buckets = registry.for_spec(spec).buckets(spec)
        if len(buckets) != 1:
            raise ValueError(f"a job compiles one bucket; use run_buckets for {buckets}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
        problems = errors(spec)
        if problems:
            raise SpecError(problems)
        self.spec = spec
        self.workdir = Path(spec.workdir if workdir is None else workdir)
        self.backend = backend
        self.timeout = spec.compiler.timeout if timeout is None else timeout
        self.grace_s = GRACE_S
        self.on_line = on_line
        self.on_event = on_event
        self.standby = standby
        self.use_cache = use_cache
        # What the build will read, known before it starts (jobs.prepare); None: looked up in the workdir.
        self.prepared = prepared
        # A compare's tapped variant of the spec's module ({"patterns", "depth", "of"}: neffbench.numerics).
        self.taps = taps
        # A profiled variant ({"of": JOB}): compiled with the framework's debug names (neffbench.structure.profiled).
        self.profiled = profiled
        # Where the spec came from when not from a spec file or the window: ``neffbench.trace``'s call (job.json's
        # ``origin``: the call, how its object was saved, the files its code came from).
        self.origin = origin
        self.job_dir: Path | None = None
        self.record: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._proc: Child | None = None
        self._cancelled = False
        self._timed_out = False
        self._result: JobResult | None = None
        self._parser = CompilerLog()
        self._dots = 0
        self._child_outcome: dict | None = None
        self._write_error: str | None = None
        self._log_fh: Any = None
        self._events_fh: Any = None
        self._t0 = 0.0

    # ---- start -------------------------------------------------------------------------------

    def start(self) -> Path:
        """Create the job directory and its record, then start the worker; returns the job directory."""
        if self.job_dir is not None:
            raise RuntimeError("this job has already been started")
        try:
            return self._start()
        finally:
            # Whatever happened (another backend, cancelled, an error), a standby not handed over
            # must not outlive start(); after a hand-over this does nothing.
            if self.standby is not None:
                self.standby.discard()

    def _start(self) -> Path:
        try:
            for job_dir in records.mark_interrupted(self.workdir):
                self._call(
                    self.on_line,
                    f"neffbench: {job_dir.name} was left running by a process that is gone: marked interrupted",
                )
        except OSError:
            log.warning("could not check %s for interrupted jobs", self.workdir, exc_info=True)
        records.prepare_workdir(self.workdir)
        if self.prepared is None:
            self.prepared = prepare.prepare(self.spec, self.workdir)  # the records only: no probe here
        digest = self.prepared.digest
        try:
            suffix = "-taps" if self.taps else "-profiled" if self.profiled else ""
            named = dataclasses.replace(self.spec, name=f"{self.spec.name}{suffix}") if suffix else self.spec
            job_dir = records.create_job_dir(self.workdir, named, sources=digest).resolve()
        except OSError as exc:
            raise records.WorkdirError(
                f"no job directory can be made in {self.workdir}: {exc.strerror or exc}"
            ) from None
        try:
            # The record first: a directory is a job from the moment it exists, even if we die next.
            self.record = record_start.new_record(
                self.spec,
                job_dir,
                backend_requested=self.backend,
                timeout=self.timeout,
                sources=self.prepared.sources,
                taps=self.taps,
                profiled=self.profiled,
            )
            if self.origin is not None:
                self.record["origin"] = self.origin
            records.write_record(job_dir, self.record)
            # A preset's "--lnc=2" in the description stays only if this job is compiled with it.
            save(with_held_claims(self.spec), job_dir / "spec.toml")
            if self.taps:
                procs.write_json(job_dir / TAPS_REQUEST, self.taps)
            if self.profiled:
                procs.write_json(job_dir / PROFILED_REQUEST, self.profiled)
            self._log_fh = (job_dir / "job.log").open("w", encoding="utf-8", newline="\n")
            self._events_fh = (job_dir / "events.jsonl").open("w", encoding="utf-8", newline="\n")
        except OSError as exc:
            # Nothing has started and nothing of the user's is in it: the directory goes.
            for fh in (self._log_fh, self._events_fh):
                if fh is not None:
                    fh.close()
            shutil.rmtree(job_dir, ignore_errors=True)
            raise records.WorkdirError(f"the job cannot be recorded: {records.cannot_write(job_dir, exc)}") from None
        self.job_dir = job_dir
        if self.prepared.sources is not None:
            self._note(
                f"neffbench: the build reads {sources.summary(self.prepared.sources)} "
                f"({self.prepared.sources.get('how')})"
            )
        elif self.prepared.note:
            self._note(f"neffbench: {self.prepared.note}")
        if self._serve_from_cache(job_dir):
            return job_dir
        spawn_error = None
        proc = None
        with self._lock:
            cancelled = self._cancelled
            if not cancelled:
                try:
                    proc = self._proc = self._take_standby(job_dir) or self._spawn(job_dir)
                except OSError as exc:
                    spawn_error = f"could not start the worker: {exc}"
        if proc is None:
            # Cancelled or not spawned. Finalised outside the lock: callbacks may call cancel().
            self._result = self._finalize(None, spawn_error=spawn_error)
            return job_dir
        self._t0 = time.monotonic()
        self.record["worker_pid"] = proc.pid
        self.record["worker_pid_start"] = procs.process_start_time(proc.pid)
        self.record["stage"] = "starting"
        records.write_record(job_dir, self.record)
        self._emit({"type": "started", "job_dir": str(job_dir), "pid": proc.pid})
        return job_dir

    def _serve_from_cache(self, job_dir: Path) -> bool:
        """An identical earlier compile that succeeded: its products, a finished record, no worker."""
        from neffbench.jobs import cache

        if not self.use_cache:
            self.record["cache"] = {"hit": False, "reason": "--no-cache"}
            return False
        if self.record.get("cache_key") is None:
            self.record["cache"] = {
                "hit": False,
                "reason": "the files the build reads were not known before it started",
            }
            return False
        found = cache.lookup(self.workdir, self.record["cache_key"])
        if found is None:
            self.record["cache"] = {"hit": False}
            return False
        self._t0 = time.monotonic()
        self._emit({"type": "started", "job_dir": str(job_dir), "pid": None, "cache": True})
        try:
            lines = cache.serve(*found, job_dir, self.record)
        except OSError as exc:
            self._write_failed(job_dir, exc)
            self._result = self._finalize(None)
            return True
        for line in lines:
            self._note(line)
        self._enter_stage("cache", None)
        self._enter_stage("done", None)
        self._child_outcome = {"outcome": "succeeded", "reason": None}
        self._result = self._finalize(0)
        return True

    def _take_standby(self, job_dir: Path) -> Child | None:
        """The standby's process, now this job's worker, or None to spawn one."""
        if self.standby is None or self.standby.backend != self.backend:
            return None
        return self.standby.hand_over(job_dir)

    def _spawn(self, job_dir: Path) -> Child:
        return spawn_worker(self.backend, job_dir)

    # ---- cancel ------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the job: SIGTERM to its process group now, SIGKILL after the grace period. Never blocks."""
        with self._lock:
            if self._result is not None or self._cancelled:
                return
            self._cancelled = True
            self._terminate_locked()

    def _terminate_locked(self) -> None:
        if self._proc is not None:
            self._proc.terminate(self.grace_s)

    # ---- wait --------------------------------------------------------------------------------

    def wait(self) -> JobResult:
        """Stream the worker's output until it ends, then finalise and return the record."""
        if self._result is not None:
            return self._result
        if self._proc is None:
            raise RuntimeError("start() the job before waiting for it")
        proc = self._proc
        try:
            ended = procs.pump(
                proc,
                self._handle_line,
                on_read=self._on_read,
                on_deadline=self._on_deadline,
                deadline=self._t0 + self.timeout if self.timeout else None,
                eof_wait_s=EOF_WAIT_S,
            )
            if not ended:
                self._handle_line(
                    "neffbench: a process outside the job's process group kept its output open; stopped reading"
                )
        except BaseException:
            proc.kill_and_reap()
            self._result = self._finalize(proc.returncode, interrupted="the runner itself stopped")
            raise
        self._result = self._finalize(proc.reap())
        return self._result

    def _on_read(self, pending: str) -> None:
        self._flush_log()
        if pending and pending.strip(".") == "" and len(pending) != self._dots:
            self._dots = len(pending)  # signs of life before the line ends: the window shows them
            self._emit({"type": "progress", "dots": self._dots})

    def _on_deadline(self) -> None:
        with self._lock:
            if not self._cancelled:
                self._timed_out = True
                self._terminate_locked()
