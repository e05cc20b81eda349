"""``neffbench structure JOB``: the job's model as a tree, with each layer's shapes, parameters, FLOPs, the latest
compare's error and the latest profile's device time; ``--model-explorer`` opens it in Google's Model Explorer."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "structure",
        help="the job's model as a tree: shapes, parameters, FLOPs, and each layer's error and device time",
        description="Show the module tree of JOB in call order (the paths of named_modules() and of compare's "
        "taps): each module's class, first call's input and output, parameters, FLOPs (torch's FlopCounterMode), "
        "the traced graph's operations under it and the line of your code that calls it; with the latest compare's "
        "error against eager and float64 (the first divergent layer marked) and the latest profile's device time, "
        "share and achieved FLOP/s against the target's peak. The structure is computed by the compile and kept in "
        "JOB/structure.json; a job compiled before that gets it now, its module built again from its spec. "
        f"Exit {EXIT_OK}, {EXIT_FAILED} when it could not be computed, {EXIT_INVALID} for bad arguments.",
    )
    p.add_argument("job", type=Path, metavar="JOB", help="a job directory")
    p.add_argument("--depth", type=int, default=None, metavar="N", help="show modules down to this depth (1: children)")
    p.add_argument("--json", action="store_true", help="print the tree and its figures as JSON")
    p.add_argument(
        "--model-explorer",
        action="store_true",
        help="open it in Google's Model Explorer (pip install 'neffbench[explorer]') with error, time and FLOPs as "
        "node data; on a remote box it prints the ssh -L line for your laptop",
    )
    p.add_argument(
        "--export",
        type=Path,
        default=None,
        metavar="DIR",
        help="write the Model Explorer graph and node-data files into DIR (no Model Explorer needed)",
    )
    p.add_argument("--port", type=int, default=8080, help="Model Explorer's port (default 8080)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from neffbench.structure import table
    from neffbench.structure.document import StructureError
    from neffbench.structure.rebuild import laid
    from neffbench.views.job import RecordError

    if args.depth is not None and args.depth < 0:
        print(f"--depth must be 0 or more, got {args.depth}.", file=sys.stderr)
        return EXIT_INVALID
    job_dir = args.job.expanduser().resolve()
    if not (job_dir / "job.json").is_file():
        print(f"{args.job} is not a job directory (it has no job.json).", file=sys.stderr)
        return EXIT_INVALID
    try:
        found = laid(job_dir, lambda line: print(line, file=sys.stderr, flush=True))
    except (StructureError, RecordError) as exc:
        print(f"structure: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.export is not None or args.model_explorer:
        from neffbench.structure import model_explorer

        return model_explorer.main(found, job_dir, args.export, open_it=args.model_explorer, port=args.port)
    if args.json:
        print(json.dumps(table.document(found, job_dir.name, args.depth), indent=2))
    else:
        print("\n".join(table.lines(found, job_dir.name, str(args.job), args.depth)))
    return EXIT_OK
