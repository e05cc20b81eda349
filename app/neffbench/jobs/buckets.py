"""Compiling every bucket of a spec: one job per bucket, one after another (each pre-starting the next worker) or several at once.

The same loop serves the CLI (:func:`run_buckets`, on the thread that calls it) and the window
(:class:`BucketLoop` on its compile thread, cancelled from the GUI thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from neffbench.jobs.compile_job import POLL_S, CompileJob, EventCallback, JobResult, LineCallback
from neffbench.jobs.prepare import Prepared, prepare
from neffbench.jobs.standby import StandbyWorker
from neffbench.kernels import registry
from neffbench.kernels.bucket_words import bucket_label
from neffbench.spec import SpecError, errors


def run_outcome(results: Iterable[JobResult], cancelled: bool = False) -> str:
    """What a compile of every bucket came to: ``cancelled`` when it or any job was, ``succeeded`` when every job
    succeeded, else ``failed`` (no job at all too). The window's status line and the command's exit code say it."""
    outcomes = {r.outcome for r in results}
    if cancelled or "cancelled" in outcomes:
        return "cancelled"
    return "succeeded" if outcomes == {"succeeded"} else "failed"


def _prefixed(on_line: LineCallback, prefix: str) -> LineCallback:
    def call(line: str) -> None:
        on_line(prefix + line)

    return call


class BucketLoop:
    """One job per bucket of the spec's kernel, ``jobs`` at a time: ``run`` blocks on its thread until all have
    ended (results in bucket order); ``cancel`` may be called from any thread and never blocks.

    With several jobs at once each line is prefixed with its bucket (events carry ``bucket``). A given
    ``standby`` belongs to the loop from here on and goes to the first bucket's job. One job at a time,
    each job's start also starts the next bucket's worker as a standby, so that its torch import overlaps
    this job's compile. ``prepared``: what every bucket's build reads, found before (the closure does not
    depend on the bucket); None: looked up in the workdir's records. ``on_job_started(bucket, job_dir)``
    and ``on_job_finished(result)`` are called on the job's thread. Once cancelled, running jobs stop and
    the buckets not started are recorded as cancelled before start (``record_skipped``) or left out.
    """

    def __init__(
        self,
        spec: Any,
        *,
        workdir: str | Path | None = None,
        backend: str = "auto",
        jobs: int = 1,
        timeout: float | None = None,
        on_line: LineCallback | None = None,
        on_event: EventCallback | None = None,
        standby: StandbyWorker | None = None,
        use_cache: bool = True,
        prepared: Prepared | None = None,
        on_job_started: Callable[[dict, Path], None] | None = None,
        on_job_finished: Callable[[JobResult], None] | None = None,
        record_skipped: bool = True,
    ):
        self.spec, self.workdir, self.backend, self.jobs, self.timeout = spec, workdir, backend, jobs, timeout
        self.on_line, self.on_event, self.use_cache, self.prepared = on_line, on_event, use_cache, prepared
        self.on_job_started, self.on_job_finished, self.record_skipped = on_job_started, on_job_finished, record_skipped
        # Every standby this loop owns; those no job took are discarded at the end, whatever happened.
        self._standbys = [standby] if standby is not None else []
        self._lock = threading.Lock()
        self._cancelled = False
        self._runners: list[CompileJob] = []

    def cancel(self) -> None:
        """Stop the running jobs (SIGTERM now, SIGKILL after their grace period) and start no other."""
        with self._lock:
            self._cancelled = True
            runners = list(self._runners)
        for runner in runners:
            runner.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def run(self) -> list[JobResult]:
        try:
            return self._run()
        finally:
            for leftover in self._standbys:
                leftover.discard()

    def _run(self) -> list[JobResult]:
        problems = errors(self.spec)
        if problems:
            raise SpecError(problems)
        kernel = registry.for_spec(self.spec)
        buckets = kernel.buckets(self.spec)
        parallel = self.jobs > 1 and len(buckets) > 1
        if self.prepared is None:
            self.prepared = prepare(self.spec, self.spec.workdir if self.workdir is None else self.workdir)
        runners = []
        for i, bucket in enumerate(buckets):
            prefix = f"[{bucket_label(bucket)}] "
            line_cb = _prefixed(self.on_line, prefix) if parallel and self.on_line is not None else self.on_line
            runners.append(
                CompileJob(
                    kernel.for_bucket(self.spec, bucket),
                    workdir=self.workdir,
                    backend=self.backend,
                    timeout=self.timeout,
                    on_line=line_cb,
                    on_event=self.on_event,
                    standby=self._standbys[0] if i == 0 and self._standbys else None,
                    use_cache=self.use_cache,
                    prepared=self.prepared,
                )
            )
        with self._lock:
            self._runners = runners
            cancelled = self._cancelled
        if cancelled:  # before the runners existed: cancel() could not reach them
            for runner in runners:
                runner.cancel()
        jobs = list(zip(buckets, runners, [*runners[1:], None]))
        if not parallel:
            results = [self._run_one(*job) for job in jobs]
        else:

            def run_alone(job: tuple[dict, CompileJob, CompileJob | None]) -> JobResult | None:
                return self._run_one(*job, prestart=False)

            with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="neffbench-job") as pool:
                results = list(pool.map(run_alone, jobs))
        return [r for r in results if r is not None]

    def _run_one(
        self, bucket: dict, runner: CompileJob, next_runner: CompileJob | None, prestart: bool = True
    ) -> JobResult | None:
        if self._cancelled and not self.record_skipped:
            return None  # a compile not started is not a job: no directory, no record (the window's way)
        job_dir = runner.start()
        if self.on_job_started is not None:
            self.on_job_started(bucket, job_dir)
        if prestart and next_runner is not None and not self._cancelled:
            next_standby = StandbyWorker.try_start(self.backend)
            if next_standby is not None:
                with self._lock:
                    self._standbys.append(next_standby)
                next_runner.standby = next_standby
        result = runner.wait()
        if self.on_job_finished is not None:
            self.on_job_finished(result)
        return result


def run_buckets(
    spec: Any,
    *,
    workdir: str | Path | None = None,
    backend: str = "auto",
    jobs: int = 1,
    timeout: float | None = None,
    on_line: LineCallback | None = None,
    on_event: EventCallback | None = None,
    cancel_event: threading.Event | None = None,
    standby: StandbyWorker | None = None,
    use_cache: bool = True,
    prepared: Prepared | None = None,
) -> list[JobResult]:
    """Every bucket's job (see :class:`BucketLoop`), on this thread; setting ``cancel_event`` cancels them."""
    loop = BucketLoop(
        spec,
        workdir=workdir,
        backend=backend,
        jobs=jobs,
        timeout=timeout,
        on_line=on_line,
        on_event=on_event,
        standby=standby,
        use_cache=use_cache,
        prepared=prepared,
    )
    if cancel_event is None:
        return loop.run()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if cancel_event.wait(POLL_S):
                loop.cancel()
                return

    # Not joined: it notices within POLL_S, and cancelling a finished job does nothing.
    threading.Thread(target=watch, name="neffbench-bucket-cancel", daemon=True).start()
    try:
        return loop.run()
    finally:
        done.set()
