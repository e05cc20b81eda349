"""Compiling every bucket of a spec: one job per bucket, one after another (each pre-starting the next worker) or several at once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from neffbench.jobs.prepare import Prepared, prepare
from neffbench.jobs.runner import POLL_S, EventCallback, JobResult, JobRunner, LineCallback
from neffbench.jobs.standby import StandbyWorker
from neffbench.kernels import registry
from neffbench.kernels.api import bucket_label
from neffbench.spec import SpecError, errors


def _prefixed(on_line: LineCallback, prefix: str) -> LineCallback:
    def call(line: str) -> None:
        on_line(prefix + line)

    return call


def run_buckets(spec: Any, *, workdir: str | Path | None = None, backend: str = "auto", jobs: int = 1,
                timeout: float | None = None, on_line: LineCallback | None = None,
                on_event: EventCallback | None = None, cancel_event: threading.Event | None = None,
                standby: StandbyWorker | None = None, use_cache: bool = True,
                prepared: Prepared | None = None) -> list[JobResult]:
    """One job per bucket of the spec's kernel, ``jobs`` at a time; results in bucket order.

    With several jobs at once each line is prefixed with its bucket (events carry ``bucket``).
    Setting ``cancel_event`` cancels running jobs and records the rest as cancelled before start.
    A given ``standby`` belongs to this call from here on and goes to the first bucket's job. One job
    at a time, each job's start also starts the next bucket's worker as a standby, so that its torch
    import overlaps this job's compile. ``prepared``: what every bucket's build reads, found before (the
    closure does not depend on the bucket); None: each job looks it up in the workdir's records.
    """
    # Every standby this call owns; those no job took are discarded at the end, whatever happened.
    standbys = [standby] if standby is not None else []
    try:
        problems = errors(spec)
        if problems:
            raise SpecError(problems)
        kernel = registry.for_spec(spec)
        buckets = kernel.buckets(spec)
        parallel = jobs > 1 and len(buckets) > 1
        if prepared is None:
            prepared = prepare(spec, spec.workdir if workdir is None else workdir)
        runners = []
        for i, bucket in enumerate(buckets):
            prefix = f"[{bucket_label(bucket)}] "
            line_cb = _prefixed(on_line, prefix) if parallel and on_line is not None else on_line
            runners.append(JobRunner(kernel.for_bucket(spec, bucket), workdir=workdir, backend=backend, timeout=timeout,
                                     on_line=line_cb, on_event=on_event, standby=standby if i == 0 else None,
                                     use_cache=use_cache, prepared=prepared))

        def cancelled() -> bool:
            return cancel_event is not None and cancel_event.is_set()

        def run_one(runner: JobRunner, next_runner: JobRunner | None = None) -> JobResult:
            if cancelled():
                runner.cancel()
            runner.start()
            if next_runner is not None and not cancelled():
                next_standby = StandbyWorker.try_start(backend)
                if next_standby is not None:
                    standbys.append(next_standby)
                    next_runner.standby = next_standby
            return runner.wait()

        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                if cancel_event.wait(POLL_S):
                    for runner in runners:
                        runner.cancel()
                    return

        watcher = threading.Thread(target=watch, name="neffbench-bucket-cancel", daemon=True) if cancel_event else None
        if watcher:
            watcher.start()
        try:
            if not parallel:
                return [run_one(r, nxt) for r, nxt in zip(runners, [*runners[1:], None])]
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="neffbench-job") as pool:
                return list(pool.map(run_one, runners))
        finally:
            # Not joined: it notices within POLL_S and cancelling a finished job does nothing.
            done.set()
    finally:
        for leftover in standbys:
            leftover.discard()
