"""``neffbench run``: run a job's NEFF (or a NEFF file) on a runtime, check it against the reference, and time it;
with ``--missing-buckets``, the jobs of its compile's buckets that have no run yet, in turn."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_CANCELLED = 0, 1, 2, 130


def register(sub: argparse._SubParsersAction) -> None:
    from neffbench.runs.runtimes import RUNTIMES

    p = sub.add_parser(
        "run",
        help="run and benchmark a compiled NEFF (a job directory or a .neff file)",
        description="Load the NEFF of JOB_DIR (or FILE.neff) on a runtime, feed it the job's inputs.npz "
        "(or --inputs / --random), compare its outputs with reference.npz, then time warm-up plus "
        "--iterations calls. The record goes to <job>/runs/<UTC time>-<runtime>.json. Exit 0 when it "
        "ran and matched, 1 when it failed or mismatched, 2 for bad arguments, 130 on Ctrl-C.",
    )
    p.add_argument("target", metavar="JOB_DIR|FILE.neff")
    p.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default="auto",
        help="nrtpy or spike: the NEFF on a NeuronCore; torchscript: the job's model.pt after "
        "import torch_neuronx; cpu: the job's module on the CPU (labelled CPU, never a device figure); "
        "auto (default): a device runtime when a Neuron device is present, else cpu",
    )
    p.add_argument("--iterations", type=int, default=50, metavar="N", help="timed calls (default 50)")
    p.add_argument("--warmup", type=int, default=5, metavar="W", help="untimed calls first (default 5)")
    p.add_argument(
        "--mode",
        choices=("device", "host"),
        default=None,
        help="device: NeuronCore time (nrtpy/spike); host: wall clock with transfers (default: the runtime's first)",
    )
    p.add_argument("--core", type=int, default=0, metavar="N", help="NeuronCore to run on (default 0)")
    p.add_argument(
        "--neff", default=None, metavar="PATH", help="which NEFF of a job with several (its path in the job)"
    )
    p.add_argument(
        "--inputs",
        nargs="+",
        default=None,
        metavar="FILE.npz|NAME=FILE.npy",
        help="inputs to feed instead of the job's inputs.npz",
    )
    p.add_argument("--random", action="store_true", help="random values of the recorded shapes and dtypes")
    p.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
    p.add_argument(
        "--profile",
        action="store_true",
        help="also capture a profile with neuron-explorer (or neuron-profile) and show its summary; a job's profile "
        "is captured from its profiled variant (the same spec compiled with the framework's debug names, cached like "
        "any job), so that `neffbench structure JOB` shows each layer's device time",
    )
    p.add_argument(
        "--steps",
        type=int,
        default=1,
        metavar="N",
        help="call it N times in a row, each with the next inputs (positions going on, fresh random values) and "
        "the module's state (a KV cache) carried from the call before, each against the eager module carried the "
        "same way (default 1)",
    )
    p.add_argument(
        "--prefill",
        default=None,
        metavar="JOB_DIR",
        help="with --steps: first run this job (another bucket of the same module, a prefill) on its own inputs "
        "and carry its state into the N calls of this one (--runtime cpu)",
    )
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="stop the run after S seconds")
    p.add_argument("--json", action="store_true", help="print the run record as JSON; the log goes to stderr")
    p.add_argument(
        "--missing-buckets",
        action="store_true",
        help="run, one after another, the jobs of JOB_DIR's compile whose bucket has no run yet (on --runtime, or by "
        'default on the runtime JOB_DIR last ran on), as the Run tab\'s "Run the missing buckets" does; a failure '
        "stops the rest",
    )
    p.set_defaults(func=run)


def _inputs(values: list[str] | None) -> tuple[str | None, dict[str, str] | None, str | None]:
    if not values:
        return None, None, None
    if len(values) == 1 and "=" not in values[0]:
        return values[0], None, None
    npy = {}
    for item in values:
        name, sep, path = item.partition("=")
        if not sep or not name:
            return None, None, f"--inputs {item!r}: give FILE.npz, or NAME=FILE.npy for each input."
        npy[name] = path
    return None, npy, None


def _profile_neff(subject: Any, out: Any) -> Any:
    """The NEFF a job's profile is captured from (its profiled variant's); None for the one run (a bare NEFF, or a
    job whose variant could not be had: its profile then maps time to no layer, and the output says why)."""
    from neffbench.structure.profiled import ProfiledError, with_debug_names

    if subject.job_dir is None or subject.neff is None:
        return None
    say = lambda line: print(line, file=out, flush=True)  # noqa: E731
    try:
        found = with_debug_names(subject.job_dir)
    except ProfiledError as exc:
        say(f"neffbench: profiling the job's own NEFF, whose time maps to no layer: {exc}")
        return None
    if found.job_dir != subject.job_dir:
        how = "served from the cache" if found.cached else "compiled"
        say(
            f"neffbench: the profile is captured from the profiled variant {found.job_dir.name} ({how}: the same spec "
            "with the framework's debug names, which map device time to layers)"
        )
    return found.neff


def run(args: argparse.Namespace) -> int:
    if args.missing_buckets:
        return run_missing(args)
    return run_one(args, args.target, args.runtime)


def run_one(args: argparse.Namespace, target: str, runtime: str) -> int:
    """Run ``target`` on ``runtime`` with the other options of ``args``; the exit code."""
    from neffbench.runs.neff_run import NeffRun
    from neffbench.runs.subject import SubjectError, resolve
    from neffbench.runs.summary import summary_lines

    npz, npy, problem = _inputs(args.inputs)
    if problem or (args.random and args.inputs):
        print(problem or "--random and --inputs exclude each other.", file=sys.stderr)
        return EXIT_INVALID
    try:
        subject = resolve(target, neff=args.neff)
        prefill = resolve(args.prefill) if args.prefill else None
        out = sys.stderr if args.json else sys.stdout
        profile_neff = _profile_neff(subject, out) if args.profile else None
        runner = NeffRun(
            subject,
            runtime=runtime,
            iterations=args.iterations,
            warmup=args.warmup,
            mode=args.mode,
            core=args.core,
            inputs_npz=npz,
            inputs_npy=npy,
            random=args.random,
            seed=args.seed,
            profile=args.profile,
            profile_neff=profile_neff,
            steps=args.steps,
            prefill=prefill,
            timeout=args.timeout,
            on_line=lambda line: print(line, file=out, flush=True),
        )
    except (SubjectError, ValueError) as exc:
        print(f"{target}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    cancelled = threading.Event()
    on_main = threading.current_thread() is threading.main_thread()

    def on_interrupt(signum: int, frame: Any) -> None:
        cancelled.set()
        runner.cancel()

    previous = signal.signal(signal.SIGINT, on_interrupt) if on_main else None
    try:
        runner.start()
        result = runner.wait()
    finally:
        if on_main:
            signal.signal(signal.SIGINT, previous)
    if args.json:
        from neffbench.api.run import Run

        print(json.dumps(Run.of(result).to_json(), indent=2, default=str))
    else:
        print()
        for line in summary_lines(result.record, str(result.path)):
            print(line)
    if result.outcome == "cancelled" or cancelled.is_set():
        return EXIT_CANCELLED
    return EXIT_OK if result.outcome == "succeeded" else EXIT_FAILED


# What a run of another job cannot share: each bucket is its own job, with its own NEFF and inputs.
_PER_JOB = (("neff", "--neff"), ("inputs", "--inputs"), ("prefill", "--prefill"), ("json", "--json"))


def run_missing(args: argparse.Namespace) -> int:
    from pathlib import Path

    from neffbench.kernels.bucket_words import bucket_phrase
    from neffbench.runs.missing_buckets import ended_text, missing_buckets
    from neffbench.runs.subject import SubjectError, resolve

    given = [flag for name, flag in _PER_JOB if getattr(args, name)]
    if given:
        print(f"--missing-buckets runs other jobs than {args.target}: leave out {', '.join(given)}.", file=sys.stderr)
        return EXIT_INVALID
    try:
        subject = resolve(args.target)
    except SubjectError as exc:
        print(f"{args.target}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if subject.job_dir is None:
        print(f"{args.target}: --missing-buckets needs a job directory, not a NEFF file.", file=sys.stderr)
        return EXIT_INVALID
    curve_runtime, rows = missing_buckets(subject.job_dir, None if args.runtime == "auto" else args.runtime)
    on = f" on {curve_runtime}" if curve_runtime else ""
    if not rows:
        print(f"Every bucket of this compile has a run{on}: nothing to run.")
        return EXIT_OK
    print(f"Not run yet{on}: {', '.join(bucket_phrase(r['bucket']) for r in rows)}.", flush=True)
    for done, row in enumerate(rows, 1):
        print(f"\n== bucket {done} of {len(rows)} ({Path(row['job_dir']).name})", flush=True)
        code = run_one(args, row["job_dir"], curve_runtime or args.runtime)
        if code != EXIT_OK:
            outcome = "cancelled" if code == EXIT_CANCELLED else "failed"
            print(f"\n{ended_text(len(rows), len(rows) - done, outcome)}")
            return code
    print(f"\n{ended_text(len(rows), 0, 'succeeded')}")
    return EXIT_OK
