"""``neffbench compare JOB``: where a job's outputs diverge from the eager and float64 runs, tap by tap."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# As check's and run's: 0 done and fine, 1 could not finish, 2 invalid input; and what only a compare can say.
EXIT_WITHIN, EXIT_NOT_COMPARED, EXIT_INVALID, EXIT_DIVERGENT = 0, 1, 2, 3
EXITS = (
    f"Exit codes: {EXIT_WITHIN} every tap is within its dtype's tolerance against eager and float64; "
    f"{EXIT_DIVERGENT} a tap diverges (the first divergent is named); {EXIT_NOT_COMPARED} it could not compare "
    "(the tapped variant did not compile or run, or there is no device output to compare against eager, as for a "
    f"NEFF on a host without a NeuronCore); {EXIT_INVALID} invalid arguments; 130 interrupted (Ctrl-C)."
)


def register(sub: argparse._SubParsersAction) -> None:
    from neffbench.runs.runtimes import RUNTIMES

    p = sub.add_parser(
        "compare",
        help="compare a job layer by layer: the first tapped module whose output diverges",
        description="Compile the job's module again as its tapped variant (same weights and inputs; each tapped "
        "submodule's output an extra output) with the job's backend and options, run it and the job once on the "
        "runtime, and compare every tap with the eager run in the job's dtype and with a float64 run. By "
        "default every submodule down to the deepest depth with at most 64 taps is tapped; --taps and --depth "
        "choose others. The tapped variant is a job of its own (cached like any job); the result is kept in "
        "JOB/compares/. " + EXITS,
    )
    p.add_argument("job", type=Path, metavar="JOB", help="a job directory")
    p.add_argument(
        "--taps",
        action="append",
        default=[],
        metavar="PATTERN",
        help="module paths to tap, as named_modules() names them ('layers.*.mlp', 'encoder.layer.3'; * is one "
        "path segment, ** any number); repeatable",
    )
    p.add_argument("--depth", type=int, default=None, metavar="N", help="tap modules down to this depth (1: children)")
    p.add_argument("--runtime", choices=RUNTIMES, default="auto", help="as for neffbench run (default auto)")
    p.add_argument("--no-cache", action="store_true", help="compile the tapped variant even if it is cached")
    p.add_argument("--json", action="store_true", help="print the result as JSON (the document kept in compares/)")
    p.add_argument("-v", "--verbose", action="store_true", help="also print the compile's and the runs' output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from neffbench.numerics.compare import Compare, CompareError

    if args.depth is not None and args.depth < 1:
        print(f"--depth must be 1 or more, got {args.depth}.", file=sys.stderr)
        return EXIT_INVALID
    job_dir = args.job.expanduser().resolve()
    if not (job_dir / "job.json").is_file():
        print(f"{args.job} is not a job directory (it has no job.json).", file=sys.stderr)
        return EXIT_INVALID
    compare = Compare(
        job_dir,
        patterns=tuple(args.taps),
        depth=args.depth,
        runtime=args.runtime,
        use_cache=not args.no_cache,
        on_line=(lambda line: print(line, file=sys.stderr)) if args.verbose else None,
        on_step=lambda sentence: print(f"neffbench: {sentence}", file=sys.stderr),
    )
    try:
        result = compare.run()
    except CompareError as exc:
        print(f"compare failed: {exc}", file=sys.stderr)
        return EXIT_NOT_COMPARED
    except KeyboardInterrupt:
        compare.cancel()
        raise
    from neffbench.api.compare import Compare as Compared

    compared = Compared.of(result)
    if args.json:
        print(json.dumps(compared.to_json(), indent=2))
    else:
        print(str(compared))
        print(f"\nkept in {compared.path}")
    return _exit_status(compared.verdict)


def _exit_status(verdict: object) -> int:
    from neffbench.taps.report import DIVERGENT, WITHIN

    return {WITHIN: EXIT_WITHIN, DIVERGENT: EXIT_DIVERGENT}.get(str(verdict), EXIT_NOT_COMPARED)
