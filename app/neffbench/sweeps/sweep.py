"""Running a sweep: the record first, cached points served here without dispatch, the rest to an executor, cancel throughout."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.backends.registry import CHOICES as BACKENDS
from neffbench.jobs import records
from neffbench.sweeps.errors import SweepError
from neffbench.sweeps.grid import SweepPlan
from neffbench.sweeps.record import FINAL_STATES, SweepRecord
from neffbench.sweeps.tracker import EventCallback, SweepLineCallback, Tracker

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Task:
    """One point handed to an executor."""

    index: int
    spec: Any
    label: str
    memory_bytes: int
    prepared: Any = None  # jobs.prepare.Prepared of its build, when found before the sweep started


@dataclass(frozen=True)
class JobOptions:
    """What every point's job shares."""

    sweep_id: str
    workdir: Path
    backend: str
    timeout: float | None
    use_cache: bool


@dataclass
class SweepResult:
    """How a sweep ended; ``record`` is the final ``sweep.json``."""

    sweep_id: str
    path: Path
    state: str  # succeeded (every point did), failed, cancelled
    record: dict

    @property
    def exit_code(self) -> int:
        return {"succeeded": 0, "cancelled": 130}.get(self.state, 1)


def _cache_key(spec: Any, prepared: Any, backend: str) -> str | None:
    """The key ``record_start.new_record`` gives the point's job; None when only the job itself can tell (what
    the build of user code reads is not known before it runs)."""
    from neffbench.jobs import cache, prepare

    digest = prepared.digest if prepared is not None else None
    if digest is None and prepare.needed(spec):
        return None
    return cache.digest(cache.key(spec, cache.predicted_backend(backend), digest))


def _cached(task: Task, options: JobOptions) -> bool:
    """Whether the job runner will serve this point from the workdir's cache: its key, looked up as the runner
    looks it up."""
    from neffbench.jobs import cache

    wanted = _cache_key(task.spec, task.prepared, options.backend) if options.use_cache else None
    return wanted is not None and cache.lookup(options.workdir, wanted) is not None


def cached_points(plan: SweepPlan, workdir: str | Path, backend: str) -> frozenset[int]:
    """The valid points of ``plan`` the workdir's cache would serve (as the sweep decides it), with one pass over
    the workdir's records: what a sweep's "N to compile" must not count. Reads files: off the GUI thread."""
    from neffbench.jobs import cache

    keys = {p.index: _cache_key(p.spec, p.prepared, backend) for p in plan.valid}
    wanted = {k for k in keys.values() if k is not None}
    if not wanted or not Path(workdir).is_dir():
        return frozenset()
    found = cache.lookup_all(Path(workdir), wanted)
    return frozenset(i for i, k in keys.items() if k is not None and k in found)


def _serve_cached(task: Task, options: JobOptions, tracker: Tracker) -> None:
    from neffbench.jobs.compile_job import CompileJob

    def on_event(ev: dict[str, Any]) -> None:
        if ev.get("type") == "started":
            tracker.started(task.index, job_dir=ev.get("job_dir"), dispatched=False)
        tracker.job_event(task.index, ev)

    from neffbench.jobs.records import WorkdirError

    runner = CompileJob(
        task.spec,
        workdir=options.workdir,
        backend=options.backend,
        timeout=options.timeout,
        on_line=lambda text: tracker.line(task.index, text),
        on_event=on_event,
        use_cache=True,
        prepared=task.prepared,
    )
    try:
        runner.start()
        result = runner.wait()
    except WorkdirError as exc:
        tracker.finished(task.index, "failed", str(exc))
        return
    tracker.finished(
        task.index,
        result.outcome,
        result.reason,
        job_dir=result.job_dir,
        cached=result.view.cache_hit,
        duration_s=result.view.duration_s,
    )


def _executor(
    name: Any,
    *,
    jobs: int | None,
    address: str | None,
    shared_workdir: bool,
    cpus_per_job: float,
    runtime_env: dict | None,
    standbys: list[Any],
) -> Any:
    if not isinstance(name, str):
        return name  # an executor object (prepare, run, close), e.g. a LocalExecutor with its own limiter
    if name == "local":
        from neffbench.sweeps.local import LocalExecutor

        if address is not None:
            raise SweepError("--address is for the ray executor (--executor ray)")
        if shared_workdir:
            raise SweepError("--shared-workdir is for the ray executor (--executor ray)")
        return LocalExecutor(jobs or 1, standbys=standbys)
    if name == "ray":
        from neffbench.sweeps.ray_executor import RayExecutor, RayMissing

        try:
            return RayExecutor(
                address=address,
                jobs=jobs,
                shared_workdir=shared_workdir,
                cpus_per_job=cpus_per_job,
                runtime_env=runtime_env,
            )
        except RayMissing as exc:
            raise SweepError(str(exc)) from None
    raise SweepError(f"the executor must be one of {', '.join(EXECUTORS)}; got {name!r}")


def run_sweep(
    plan: SweepPlan,
    *,
    executor: Any = "local",
    jobs: int | None = None,
    address: str | None = None,
    backend: str = "auto",
    workdir: str | Path | None = None,
    timeout: float | None = None,
    use_cache: bool = True,
    strict: bool = False,
    shared_workdir: bool = False,
    cpus_per_job: float = 1,
    runtime_env: dict | None = None,
    on_line: SweepLineCallback | None = None,
    on_event: EventCallback | None = None,
    cancel_event: threading.Event | None = None,
    on_record: Callable[[Path], None] | None = None,
    standbys: list[Any] | None = None,
) -> SweepResult:
    """Run every valid point of ``plan`` as a job; see the package docstring. Raises SweepError before anything
    starts when the sweep cannot run, and WorkdirError when the workdir cannot be written. ``standbys``
    (``StandbyWorker`` s) belong to the sweep from the call on: the local executor hands them to its first
    jobs, and stops those it did not use."""
    try:
        return _checked_run(
            plan,
            executor=executor,
            jobs=jobs,
            address=address,
            backend=backend,
            workdir=workdir,
            timeout=timeout,
            use_cache=use_cache,
            strict=strict,
            shared_workdir=shared_workdir,
            cpus_per_job=cpus_per_job,
            runtime_env=runtime_env,
            on_line=on_line,
            on_event=on_event,
            cancel_event=cancel_event,
            on_record=on_record,
            standbys=list(standbys or []),
        )
    finally:
        for standby in standbys or []:
            standby.discard()  # does nothing to one a job took


def _checked_run(
    plan: SweepPlan,
    *,
    executor: Any,
    jobs: int | None,
    address: str | None,
    backend: str,
    workdir: str | Path | None,
    timeout: float | None,
    use_cache: bool,
    strict: bool,
    shared_workdir: bool,
    cpus_per_job: float,
    runtime_env: dict | None,
    on_line: SweepLineCallback | None,
    on_event: EventCallback | None,
    cancel_event: threading.Event | None,
    on_record: Callable[[Path], None] | None,
    standbys: list[Any],
) -> SweepResult:
    if plan.problems:
        raise SweepError("; ".join(p.message for p in plan.problems))
    if backend not in BACKENDS:
        raise SweepError(f"the backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if jobs is not None and jobs < 1:
        raise SweepError("--jobs must be at least 1")
    if strict and plan.invalid:
        raise SweepError(f"{len(plan.invalid)} of {plan.count} point(s) are invalid and --strict was given")
    if not plan.valid:
        raise SweepError(f"none of the {plan.count} point(s) is valid")
    root = records.prepare_workdir(workdir if workdir is not None else plan.base.workdir).resolve()
    runner = _executor(
        executor,
        jobs=jobs,
        address=address,
        shared_workdir=shared_workdir,
        cpus_per_job=cpus_per_job,
        runtime_env=runtime_env,
        standbys=standbys,
    )
    settings = {
        "executor": executor if isinstance(executor, str) else type(executor).__name__,
        "jobs": jobs,
        "address": address,
        "backend": backend,
        "timeout": timeout,
        "use_cache": use_cache,
        "strict": strict,
        "shared_workdir": shared_workdir,
        "cpus_per_job": cpus_per_job,
    }
    runner.prepare()  # connects to a cluster, say: a failure here is a sentence before anything is recorded
    try:
        return _run(
            plan,
            runner,
            root,
            settings,
            on_line=on_line,
            on_event=on_event,
            cancel_event=cancel_event,
            on_record=on_record,
        )
    finally:
        runner.close()


def _run(
    plan: SweepPlan,
    runner: Any,
    root: Path,
    settings: dict[str, Any],
    *,
    on_line: SweepLineCallback | None,
    on_event: EventCallback | None,
    cancel_event: threading.Event | None,
    on_record: Callable[[Path], None] | None,
) -> SweepResult:
    record = SweepRecord.create(root, plan, settings)
    if on_record is not None:
        on_record(record.path)
    tracker = Tracker(record, on_line, on_event)
    cancel = cancel_event if cancel_event is not None else threading.Event()
    options = JobOptions(record.sweep_id, root, settings["backend"], settings["timeout"], settings["use_cache"])
    short = plan.short_names
    tracker.emit(
        {
            "type": "sweep_started",
            "path": str(record.path),
            "points": plan.count,
            "valid": len(plan.valid),
            "executor": settings["executor"],
            "workdir": str(root),
        }
    )
    try:
        tasks = []
        for point in plan.valid:
            task = Task(
                point.index, point.spec, point.label(short), point.memory.bytes if point.memory else 0, point.prepared
            )
            if cancel.is_set():
                tracker.finished(task.index, "cancelled", "cancelled before it started")
            elif _cached(task, options):
                _serve_cached(task, options, tracker)
            else:
                tasks.append(task)
        if tasks and not cancel.is_set():
            runner.run(tasks, tracker, options, cancel)
        for task in tasks:  # whatever an executor left unfinished (it never should) is said so
            if record.point(task.index)["state"] not in FINAL_STATES:
                tracker.finished(
                    task.index,
                    "cancelled" if cancel.is_set() else "failed",
                    "cancelled before it started" if cancel.is_set() else "the executor did not run it",
                )
    except BaseException as exc:
        for point in record.snapshot()["points"]:
            if point["state"] not in FINAL_STATES:
                record.update_point(point["index"], state="interrupted", reason=f"the sweep stopped: {exc!r}")
        record.update(state="interrupted", reason=f"the sweep stopped: {exc!r}", finished=records.iso())
        raise
    states = {p["state"] for p in record.snapshot()["points"]}
    state = (
        "cancelled"
        if cancel.is_set() or "cancelled" in states
        else "succeeded"
        if states == {"succeeded"}
        else "failed"
    )
    record.update(state=state, finished=records.iso())
    final = record.snapshot()
    tracker.emit({"type": "sweep_finished", "state": state, "counts": final["counts"], "path": str(record.path)})
    return SweepResult(record.sweep_id, record.path, state, final)
