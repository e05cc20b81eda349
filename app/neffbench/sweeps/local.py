"""The local executor: up to N jobs at once on this machine, each admitted only when memory allows."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from neffbench import procs
from neffbench.sweeps.limiter import MemoryLimiter
from neffbench.sweeps.procmem import GroupSampler
from neffbench.toolchain.flavour import warm_preload

log = logging.getLogger(__name__)
POLL_S = 0.2


class LocalExecutor:
    """Each point is a :class:`~neffbench.jobs.compile_job.CompileJob` on a thread of a pool of ``jobs``.

    A thread takes a point, waits for the memory limiter, then runs the job: the worker and compiler
    are child processes in their own group, as for ``compile``. ``limiter`` may be given (tests give
    one with a made-up amount of memory); by default it reads /proc/meminfo and the cgroup's limit.
    """

    def __init__(self, jobs: int = 1, *, limiter: MemoryLimiter | None = None, standbys: list[Any] | None = None):
        self.jobs = max(1, int(jobs))
        self.limiter = limiter
        # Workers started before the sweep (the CLI starts them before it even parses its arguments), so that
        # the first jobs' torch imports overlap the parent's start-up; they belong to this executor now.
        self.standbys = list(standbys or [])
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Nothing to connect to."""

    def close(self) -> None:
        """The standbys no job took are stopped."""
        with self._lock:
            leftovers, self.standbys = self.standbys, []
        for standby in leftovers:
            standby.discard()

    def take_standby(self) -> Any:
        with self._lock:
            return self.standbys.pop(0) if self.standbys else None

    def run(self, tasks: list[Any], tracker: Any, options: Any, cancel_event: threading.Event) -> None:
        sampler = GroupSampler()
        limiter = self.limiter or MemoryLimiter()
        if limiter.usage is None:
            limiter.usage = sampler.current  # what the running jobs hold already is not counted twice
        runners: dict[int, Any] = {}
        lock = threading.Lock()

        def one(task: Any) -> None:
            try:
                _run_one(task, tracker, options, cancel_event, limiter, sampler, runners, lock, self.take_standby)
            except Exception as exc:  # noqa: BLE001 - one point's surprise must not stop the others
                log.exception("sweep point %s failed unexpectedly", task.index)
                tracker.finished(task.index, "failed", f"the sweep could not run this job: {exc}")

        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                if cancel_event.wait(POLL_S):
                    with lock:
                        for runner in runners.values():
                            runner.cancel()
                    if done.wait(POLL_S):
                        return

        watcher = threading.Thread(target=watch, name="neffbench-sweep-cancel", daemon=True)
        watcher.start()
        # More points than standbys: the others fork from a warm-start server (torch imported once, not per point),
        # unless whoever started the sweep has one already (the window) or turned it off.
        warm = len(tasks) > len(self.standbys) + 1 and not os.environ.get(procs.WARM_ENV)
        try:
            with procs.warm_workers(warm_preload()) if warm else contextlib.nullcontext():
                with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="neffbench-sweep") as pool:
                    list(pool.map(one, tasks))
        finally:
            done.set()
            sampler.close()


def _run_one(
    task: Any,
    tracker: Any,
    options: Any,
    cancel_event: threading.Event,
    limiter: MemoryLimiter,
    sampler: GroupSampler,
    runners: dict[int, Any],
    lock: threading.Lock,
    take_standby: Any,
) -> None:
    from neffbench.jobs.compile_job import CompileJob
    from neffbench.jobs.records import WorkdirError

    index = task.index
    if cancel_event.is_set():
        tracker.finished(index, "cancelled", "cancelled before it started")
        return
    reservation = limiter.acquire(
        task.memory_bytes, cancel_event=cancel_event, on_note=lambda text: tracker.waiting(index, text)
    )
    if reservation is None:
        tracker.finished(index, "cancelled", "cancelled before it started")
        return
    peak = None
    try:

        def on_event(ev: dict[str, Any]) -> None:
            if ev.get("type") == "started":
                if ev.get("pid"):
                    reservation.pgid = ev["pid"]  # the worker leads its group: the group is the job
                    sampler.watch(ev["pid"])
                tracker.started(index, job_dir=ev.get("job_dir"))
            tracker.job_event(index, ev)

        runner = CompileJob(
            task.spec,
            workdir=options.workdir,
            backend=options.backend,
            timeout=options.timeout,
            on_line=lambda text: tracker.line(index, text),
            on_event=on_event,
            use_cache=options.use_cache,
            standby=take_standby(),
            prepared=task.prepared,
        )
        with lock:
            if cancel_event.is_set():
                tracker.finished(index, "cancelled", "cancelled before it started")
                return
            runners[index] = runner
        try:
            runner.start()
            result = runner.wait()
        except WorkdirError as exc:
            tracker.finished(index, "failed", str(exc))
            return
        finally:
            with lock:
                runners.pop(index, None)
    finally:
        if reservation.pgid:
            peak = sampler.forget(reservation.pgid)
        limiter.release(reservation)
    tracker.finished(
        index,
        result.outcome,
        result.reason,
        job_dir=result.job_dir,
        peak_rss=peak,
        cached=result.view.cache_hit,
        duration_s=result.view.duration_s,
    )
