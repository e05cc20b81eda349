"""``neffbench sweep``: compile a grid of spec fields as jobs, here or on a Ray cluster; ``sweep show`` compares the points."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any, TextIO

from neffbench.views.sweep import point_number

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_CANCELLED = 0, 1, 2, 130
SHOW = "show"


class Prestarted:
    """The standby workers ``prestart`` started: the sweep takes them, ``discard`` stops whatever it did not."""

    def __init__(self, standbys: list[Any]):
        self.standbys = standbys

    def discard(self) -> None:
        for standby in self.standbys:
            standby.discard()


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def prestart(argv: list[str]) -> Prestarted | None:
    """Start the first jobs' workers before anything else, as compile does: their torch imports overlap this
    process's own start-up (the parser, the spec, the plan). Only for a local sweep that will run jobs; a wrong
    guess costs a process that is stopped unused."""
    positional = [a for a in argv if not a.startswith("-")]
    if (
        not positional
        or positional[0] == SHOW
        or {"-h", "--help", "--dry-run"} & set(argv)
        or (_option(argv, "--executor") or "local") != "local"
    ):
        return None
    from neffbench.backends.registry import CHOICES as BACKENDS
    from neffbench.jobs.standby import StandbyWorker

    backend = _option(argv, "--backend") or "auto"
    try:
        jobs = int(_option(argv, "--jobs") or 1)
    except ValueError:
        return None
    if backend not in BACKENDS:
        return None
    # Never more than the machine has cores: more would only slow down each other's imports.
    count = max(1, min(jobs, os.cpu_count() or 1, 4))
    return Prestarted([s for s in (StandbyWorker.try_start(backend) for _ in range(count)) if s is not None])


def register(sub: argparse._SubParsersAction) -> None:
    from neffbench.cli import sweep_args
    from neffbench.cli.spec_args import add_spec_arguments

    p = sub.add_parser(
        "sweep",
        help="compile a grid of spec fields (each point a job), locally or on a Ray cluster; "
        "'sweep show ID' compares the points",
        description="neffbench sweep SPEC --over FIELD=V1,V2,... [--over ...]: one job per combination of the values "
        "(and per bucket), validated before anything starts; an invalid point is listed with its problems and the "
        "others still run (unless --strict). Points whose compile is cached are served without being dispatched. "
        "The sweep's record is <workdir>/sweeps/<id>/sweep.json. neffbench sweep show [SWEEP_ID] prints the table "
        "(no id: the sweeps in the workdir). Exit 0 when every point succeeded, 1 when one did not (or was "
        "invalid), 130 when cancelled (Ctrl-C), 2 when nothing could start.",
    )
    add_spec_arguments(p)
    p.add_argument(
        "sweep_id",
        nargs="?",
        metavar="SWEEP_ID",
        help="with 'show' as SPEC: the sweep (its id, a unique start of it, its folder or sweep.json)",
    )
    sweep_args.add_sweep_options(p)
    sweep_args.add_accuracy_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.spec == SHOW:
        from neffbench.cli.sweep_show import show

        return show(args)
    if args.sweep_id is not None:
        print(
            f"neffbench: unexpected argument '{args.sweep_id}' (only 'neffbench sweep show' takes a sweep id).",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if args.layer is not None:
        print(
            f"neffbench: --layer {args.layer}: only 'neffbench sweep show SWEEP_ID' shows a layer in each point.",
            file=sys.stderr,
        )
        return EXIT_INVALID
    return _sweep(args)


def _writer(out: TextIO, labels: dict[int, str]) -> Any:
    lock = threading.Lock()

    def write(point: int | None, text: str) -> None:
        prefix = "" if point is None else f"[{point_number(point)} {labels.get(point, '')}] ".replace(" ]", "]")
        with lock:
            out.write(prefix + text + "\n")
            out.flush()

    return write


def _report_plan(plan: Any, args: argparse.Namespace, out: TextIO) -> None:
    axes = " x ".join(f"{a.field} ({len(a.values)})" for a in plan.axes)
    where = (
        "ray" + (f" at {args.address}" if args.address else "")
        if args.executor == "ray"
        else f"local, {args.jobs or 1} at once"
    )
    memory = plan.memory_bytes
    mem = f"; up to {memory / 2**30:.1f} GiB per job ({plan.valid[0].memory.origin})" if memory else ""
    print(
        f"neffbench: sweep of {plan.count} point(s) over {axes}{' zipped' if plan.zip else ''}: "
        f"{len(plan.valid)} valid, {len(plan.invalid)} invalid; {where}{mem}",
        file=out,
    )
    short = plan.short_names
    for point in plan.invalid:
        for problem in point.errors:
            print(
                f"neffbench: point {point_number(point.index)} ({point.label(short)}) is invalid: {problem}", file=out
            )
    seen: dict[str, int] = {}
    for point in plan.points:
        for problem in point.problems:
            if problem.severity == "warning":
                seen[str(problem)] = seen.get(str(problem), 0) + 1
    for text, n in seen.items():
        print(f"neffbench: {text} ({n} of {plan.count} points)", file=out)
    for indexes, varying in plan.duplicates:
        names = ", ".join(f"{point_number(i)} ({plan.points[i].label(short)})" for i in indexes)
        why = (
            f"{', '.join(varying)} change{'s' if len(varying) == 1 else ''} nothing once the spec is resolved"
            if varying
            else "they resolve to the same spec"
        )
        print(
            f"neffbench: warning: points {names} would compile the same thing ({why}, with backend "
            f"{plan.backend}): they give the same result under different labels",
            file=out,
        )


def _prepare(plan: Any, spec: Any) -> None:
    """Probe each distinct build of the user's code once (one warm probe for the sweep), before anything runs."""
    from neffbench.jobs.prepare import needed

    if not any(needed(p.spec) for p in plan.valid):
        return
    from neffbench.probe.client import WarmProbe
    from neffbench.sweeps.preparing import prepare_points

    probe = WarmProbe()
    try:
        prepare_points(plan, spec.workdir, probe.ask)
    finally:
        probe.close()


def _dry_run(plan: Any, out: TextIO) -> None:
    short = plan.short_names
    for point in plan.points:
        memory = point.memory.text() if point.memory else "-"
        state = "ok" if point.valid else "INVALID: " + "; ".join(p.message for p in point.errors)
        print(f"{point_number(point.index):>4}  {point.label(short)}  {memory}  {state}", file=out)


def _sweep(args: argparse.Namespace) -> int:
    from neffbench.jobs.records import WorkdirError
    from neffbench.sweeps import SweepError

    planned = _planned(args)
    if planned is None:
        return EXIT_INVALID
    spec, plan = planned
    out = sys.stderr if args.json else sys.stdout
    _prepare(plan, spec)
    _report_plan(plan, args, out)
    stopped = _stopped_before_running(plan, args, out)
    if stopped is not None:
        return stopped
    result, failure, cancel = _run_points(args, plan, spec, out)
    if failure:
        if isinstance(failure[0], (SweepError, WorkdirError)):
            print(f"neffbench: {str(failure[0]).rstrip('.')}; nothing was started.", file=sys.stderr)
            return EXIT_INVALID
        raise failure[0]
    done = result[0]
    if (args.run or args.compare) and not cancel.is_set():
        _run_points_after(done, args, out, cancel)
    _print_done(done, args, spec, out)
    if cancel.is_set():
        return EXIT_CANCELLED
    return done.exit_code


def _planned(args: argparse.Namespace) -> tuple[Any, Any] | None:
    """The base spec and the sweep's plan, or None once the reason it cannot be planned is printed."""
    from neffbench.cli.spec_args import print_problems, read_spec
    from neffbench.sweeps import plan as make_plan

    if args.jobs is not None and args.jobs < 1:
        print("--jobs must be at least 1.", file=sys.stderr)
        return None
    if args.memory_per_job is not None and args.memory_per_job <= 0:
        print("--memory-per-job must be a positive number of GiB.", file=sys.stderr)
        return None
    # Read, not validated as a whole: a swept field may be what makes the base spec valid; each point is checked.
    spec = read_spec(args, refusal="nothing was started")
    if spec is None:
        return None
    memory = args.memory_per_job * 2**30 if args.memory_per_job is not None else None
    plan = make_plan(spec, args.over, zip=args.zip, backend=args.backend, memory_per_job=memory)
    if plan.problems:
        print_problems(plan.problems, file=sys.stderr)
        print("neffbench: the sweep cannot be planned; nothing was started.", file=sys.stderr)
        return None
    return spec, plan


def _stopped_before_running(plan: Any, args: argparse.Namespace, out: TextIO) -> int | None:
    """The exit code of a dry run or of a sweep refused as planned; None when its points are to run."""
    if args.strict and plan.duplicates:
        print(
            f"neffbench: {len(plan.duplicates)} group(s) of points would compile the same thing and --strict "
            "given; nothing was started.",
            file=sys.stderr,
        )
        return EXIT_INVALID
    from neffbench.cli.memory_gate import refused
    from neffbench.jobs.memory_verdict import plan_verdict

    too_big = refused(plan_verdict(plan), args, refusal="nothing was started")
    if args.dry_run:
        _dry_run(plan, out)
        return EXIT_INVALID if args.strict and plan.invalid else EXIT_OK
    if too_big:
        return EXIT_INVALID
    if args.strict and plan.invalid:
        print(
            f"neffbench: {len(plan.invalid)} point(s) invalid and --strict given; nothing was started.", file=sys.stderr
        )
        return EXIT_INVALID
    if not plan.valid:
        print("neffbench: no point is valid; nothing was started.", file=sys.stderr)
        return EXIT_INVALID
    return None


def _run_points(
    args: argparse.Namespace, plan: Any, spec: Any, out: TextIO
) -> tuple[list[Any], list[BaseException], threading.Event]:
    """The sweep's valid points on its executor, Ctrl-C cancelling them. Returns the sweep's result (one, unless
    it raised), what it raised and the cancel event."""
    from neffbench.jobs.cancellable import run_cancellable
    from neffbench.sweeps import run_sweep

    prestarted = getattr(args, "prestarted", None)
    labels = plan.labels
    on_line = _writer(out, labels)
    cancel = threading.Event()
    result: list[Any] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            result.append(
                run_sweep(
                    plan,
                    executor=args.executor,
                    jobs=args.jobs,
                    address=args.address,
                    backend=args.backend,
                    workdir=spec.workdir,
                    use_cache=not args.no_cache,
                    strict=args.strict,
                    shared_workdir=args.shared_workdir,
                    cpus_per_job=args.cpus_per_job,
                    on_line=on_line,
                    cancel_event=cancel,
                    standbys=prestarted.standbys if prestarted is not None else None,
                    on_record=lambda path: on_line(None, f"neffbench: record: {path}"),
                )
            )
        except BaseException as exc:  # noqa: BLE001 - re-raised or reported on the main thread
            failure.append(exc)

    # As compile does: Ctrl-C only sets the cancel event, so every job (and task) ends and is recorded.
    run_cancellable(
        work,
        cancel,
        name="neffbench-sweep",
        announce=lambda: on_line(
            None, "neffbench: cancelling every point: SIGTERM to each job's processes, SIGKILL after a grace period"
        ),
    )
    return result, failure, cancel


def _run_points_after(done: Any, args: argparse.Namespace, out: TextIO, cancel: threading.Event) -> None:
    """--run / --compare: each point that compiled, run (and compared) in turn; Ctrl-C stops between points."""
    from pathlib import Path

    from neffbench.sweeps import load, rows
    from neffbench.sweeps.accuracy import run_points

    jobs = [Path(r["job_dir"]) for r in rows(load(None, done.path)) if r["outcome"] == "succeeded" and r["job_dir"]]
    what = "running and comparing" if args.compare else "running"
    print(f"neffbench: {what} {len(jobs)} point(s) on the {args.runtime} runtime, one at a time", file=out)
    try:
        problems = run_points(
            jobs,
            runtime=args.runtime,
            iterations=args.iterations,
            compare=args.compare,
            depth=args.compare_depth,
            on_line=lambda line: print(line, file=out),
            cancel=cancel,
        )
    except KeyboardInterrupt:
        cancel.set()
        return
    for problem in problems:
        print(f"neffbench: {problem}", file=out)


def _print_done(done: Any, args: argparse.Namespace, spec: Any, out: TextIO) -> None:
    """The finished sweep's record as JSON, or its table and the command that shows it again."""
    from neffbench.cli.sweep_show import print_sweep
    from neffbench.sweeps import as_json, load

    sweep = load(None, done.path)
    if args.json:
        print(json.dumps(as_json(sweep), indent=2, default=str))
    else:
        print(file=out)
        print_sweep(sweep, out)
        print(f"neffbench sweep show {done.sweep_id} --workdir {spec.workdir}", file=out)
