"""``neffbench report JOB``: the job as one self-contained HTML file (structure, numerics, profile, compile)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a job: structure, errors, device time, compile passes",
        description="Write JOB as one HTML file with nothing outside it (no script, no network): the spec's outline, "
        "the module tree with each layer's shapes, parameters, FLOPs, latest error and device time (as neffbench "
        "structure shows them), the data flow of its upper levels, the numerics, the profile and the compiler's "
        "passes. Paths under your home are written ~. Attach it to an issue. Exit 0, or 1 when it cannot be made.",
    )
    p.add_argument("job", type=Path, metavar="JOB", help="a job directory")
    p.add_argument(
        "--out", type=Path, default=None, metavar="FILE.html", help="where to write it (default: beside the job)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from neffbench.jobs.home_paths import HomeShortener
    from neffbench.jobs.records import RECORD_NAME
    from neffbench.procs import write_text
    from neffbench.structure.document import StructureError
    from neffbench.structure.rebuild import laid
    from neffbench.structure.report_html import render
    from neffbench.views.job import RecordError
    from neffbench.views.job_file import read_job

    job_dir = args.job.expanduser().resolve()
    if not (job_dir / RECORD_NAME).is_file():
        print(f"{args.job} is not a job directory (it has no job.json).", file=sys.stderr)
        return 2
    try:
        found = laid(job_dir, lambda line: print(line, file=sys.stderr, flush=True))
        job = read_job(job_dir / RECORD_NAME)
    except (StructureError, RecordError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 1
    out = args.out.expanduser().resolve() if args.out else job_dir.parent / f"{job_dir.name}-report.html"
    try:
        write_text(out, HomeShortener().text(render(found, job, job_dir)))
    except OSError as exc:
        print(f"report: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(out)
    return 0
