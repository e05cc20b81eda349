"""``neffbench compile``: run one job per bucket, stream the log, end with a summary (or the job.json records)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from neffbench.jobs.standby import StandbyWorker

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_CANCELLED = 0, 1, 2, 130
_TICK_S = 0.5


def prestart(argv: list[str]) -> StandbyWorker | None:
    """Start the worker before anything else (called by the CLI's main with the command's arguments).

    Its torch import is most of a job's time; started here it overlaps the parent's own start-up
    (the spec machinery, the parser, loading and checking the spec). Only the backend is read
    from ``argv``; a wrong guess costs nothing, the runner then discards it and spawns afresh.
    """
    if "-h" in argv or "--help" in argv:
        return None
    backend = "auto"
    for i, arg in enumerate(argv):
        if arg == "--backend" and i + 1 < len(argv):
            backend = argv[i + 1]
        elif arg.startswith("--backend="):
            backend = arg.split("=", 1)[1]
    from neffbench.backends.registry import CHOICES as BACKENDS
    from neffbench.jobs.standby import StandbyWorker

    return StandbyWorker.try_start(backend) if backend in BACKENDS else None


def register(sub: argparse._SubParsersAction) -> None:
    from neffbench.cli.spec_args import add_spec_arguments

    p = sub.add_parser(
        "compile",
        help="compile a spec into NEFFs (one job per bucket) and record each job",
        description="Compile SPEC (a file, a preset or a module entry such as FILE.py:NAME) into one NEFF per bucket. Each job gets its own "
        "directory under the workdir with spec.toml, job.log, job.json, model.pt, reproduce.py and the NEFFs. "
        "Exit 0 when every job succeeds, 1 when one fails, 130 when cancelled (Ctrl-C), 2 for an invalid spec.",
    )
    add_spec_arguments(p)
    from neffbench.backends.registry import CHOICES as BACKENDS

    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help='torchneuron: torch.compile(backend="neuron"), TorchNeuron (torch-neuronx 2.13.3+, SDK 2.33+, '
        "Trn2/Trn3); neuron: torch_neuronx.trace (legacy, SDK ≤ 2.31, Inf2/Trn1); cpu-check: "
        "torch.jit.trace on CPU, makes no NEFF; auto (default): torchneuron or neuron, whichever "
        "torch_neuronx is installed (with neuronx-cc), else cpu-check",
    )
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="buckets compiled at once (default 1)")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="compile even when an identical compile already succeeded in the workdir (by default its "
        "NEFF is reused in a new job, which says where it came from)",
    )
    from neffbench.cli.memory_gate import add_memory_option

    add_memory_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the final job.json records (a JSON list) instead of a summary; the log goes to stderr",
    )
    p.set_defaults(func=run)


def bucket_label(bucket: Any) -> str:
    from neffbench.kernels.bucket_words import bucket_label as label

    return label(bucket)


class Progress:
    """A status line under the streaming log when the output is a terminal: stage and elapsed time per job."""

    def __init__(self, out: TextIO):
        self._out = out
        self._lock = threading.Lock()
        self._jobs: dict[str, tuple[str, str, float]] = {}
        self._shown = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="neffbench-progress", daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(_TICK_S):
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        now = time.monotonic()
        parts = [f"[{label}] {stage} {now - t0:.1f}s" for label, stage, t0 in self._jobs.values()]
        self._out.write("\r\033[K" + ("  ".join(parts) if parts else ""))
        self._out.flush()
        self._shown = bool(parts)

    def line(self, text: str) -> None:
        with self._lock:
            if self._shown:
                self._out.write("\r\033[K")
            self._out.write(text + "\n")
            self._draw()

    def event(self, ev: dict[str, Any]) -> None:
        with self._lock:
            key = ev.get("job_id") or "?"
            if ev["type"] == "started":
                self._jobs[key] = (bucket_label(ev.get("bucket")), "starting", time.monotonic())
            elif ev["type"] == "stage" and key in self._jobs:
                n, _, t0 = self._jobs[key]
                self._jobs[key] = (n, ev.get("stage", "?"), t0)
            elif ev["type"] == "finished":
                self._jobs.pop(key, None)
            self._draw()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            if self._shown:
                self._out.write("\r\033[K")
                self._out.flush()


def _plain_writer(out: TextIO):
    lock = threading.Lock()

    def write(text: str) -> None:
        with lock:
            out.write(text + "\n")
            out.flush()

    return write


def run(args: argparse.Namespace) -> int:
    from neffbench.jobs.standby import StandbyWorker

    # Started by prestart() when run from the command line, else now: either way before the spec is
    # loaded. run_buckets owns it once called; discarding it again here then does nothing.
    standby = getattr(args, "prestarted", None) or StandbyWorker.try_start(args.backend)
    try:
        return _run(args, standby)
    finally:
        if standby is not None:
            standby.discard()


def _run(args: argparse.Namespace, standby: StandbyWorker | None) -> int:
    from neffbench.jobs.records import WorkdirError

    ready = _checked(args, standby)
    if ready is None:
        return EXIT_INVALID
    spec, prepared = ready
    results, failure, cancel = _compile(args, spec, prepared, standby)
    if failure:
        if isinstance(failure[0], WorkdirError):
            print(f"neffbench: {failure[0]}.", file=sys.stderr)
            return EXIT_INVALID if not results else EXIT_FAILED
        raise failure[0]
    _print_results(args, results)
    from neffbench.jobs import run_outcome

    return {"cancelled": EXIT_CANCELLED, "failed": EXIT_FAILED}.get(run_outcome(results, cancel.is_set()), EXIT_OK)


def _checked(args: argparse.Namespace, standby: StandbyWorker | None = None) -> tuple[Any, Any] | None:
    """The spec and its prepared build, or None once the reason nothing can start is printed. ``standby``: the worker
    started for the first job, which answers what a probe child would (one process importing torch, not two)."""
    from neffbench.cli.spec_args import checked_spec

    spec = checked_spec(args, refusal="nothing was started")
    if spec is None:
        return None
    if args.jobs < 1:
        print("--jobs must be at least 1.", file=sys.stderr)
        return None
    from neffbench.cli.memory_gate import refused
    from neffbench.jobs.memory_verdict import spec_verdict

    if refused(spec_verdict(spec, args.backend), args, refusal="nothing was started"):
        return None
    from neffbench.jobs.records import WorkdirError, prepare_workdir

    try:
        prepare_workdir(spec.workdir)
    except WorkdirError as exc:
        print(f"neffbench: {exc}; nothing was started.", file=sys.stderr)  # exc: a sentence without its period
        return None
    from neffbench.cli.preparing import prepared_or_refused

    prepared = prepared_or_refused(args.spec, spec, standby.ask if standby is not None else None)
    if prepared is None:
        return None
    return spec, prepared


def _compile(
    args: argparse.Namespace, spec: Any, prepared: Any, standby: StandbyWorker | None
) -> tuple[list[Any], list[BaseException], threading.Event]:
    """Every bucket's job, its log streamed as it comes; Ctrl-C cancels them. Returns the results, what the
    bucket loop raised (if anything) and the cancel event."""
    from neffbench.jobs import run_buckets
    from neffbench.jobs.cancellable import run_cancellable

    out = sys.stderr if args.json else sys.stdout
    progress = Progress(out) if out.isatty() else None
    from neffbench.jobs.terminal_log import TracebackFolder

    on_line = TracebackFolder(progress.line if progress else _plain_writer(out))
    on_event = progress.event if progress else None
    cancel = threading.Event()
    results: list[Any] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            results.extend(
                run_buckets(
                    spec,
                    backend=args.backend,
                    jobs=args.jobs,
                    on_line=on_line,
                    on_event=on_event,
                    cancel_event=cancel,
                    standby=standby,
                    use_cache=not args.no_cache,
                    prepared=prepared,
                )
            )
        except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread
            failure.append(exc)

    run_cancellable(
        work,
        cancel,
        name="neffbench-compile",
        announce=lambda: on_line(
            "neffbench: cancelling: SIGTERM to each job's processes, SIGKILL after a grace period"
        ),
    )
    on_line.close()
    if progress:
        progress.close()
    return results, failure, cancel


def _print_results(args: argparse.Namespace, results: list[Any]) -> None:
    """The job.json records as JSON, or each job's summary (and a table of the buckets when there are several)."""
    from neffbench.api.job import Job
    from neffbench.jobs.summary import bucket_table, summary_lines

    records: list[Any] = [Job.of(r).to_json() for r in results]
    if args.json:
        print(json.dumps(records, indent=2, default=str))
    else:
        print()
        for result in results:
            for line in summary_lines(result.record, str(result.job_dir)):
                print(line)
        if len(results) > 1:
            print()
            for line in bucket_table(records):
                print(line)
