"""``neffbench bundle``: zip what a compiler team needs to reproduce a job (logs, command, HLO, versions, README)."""

from __future__ import annotations

import argparse
import json
import sys

from neffbench.words import plural


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bundle",
        help="zip a job's logs, compiler command, HLO and versions for a bug report",
        description="Write <job_id>-bugreport.zip beside JOB: spec.toml, job.json, job.log, "
        "events.jsonl, reproduce.py, the compiler command and logs, versions.json, the compiler's input "
        "(compiler/model/), model.pt, inputs.npz, reference.npz and the NEFFs while under --max-size, "
        "and a README.txt saying what is inside and what was left out. Only files inside the job "
        "directory are read; the home directory is shortened to ~ in text files. Exit 0, or 1 with "
        "the reason.",
    )
    p.add_argument("job", metavar="JOB", help="a job directory, a NEFF inside one, or a job id (with --workdir)")
    p.add_argument(
        "--workdir",
        metavar="DIR",
        default=None,
        help="find JOB as a job id (or the start of one) in DIR (default: ./neffbench-workdir)",
    )
    p.add_argument(
        "--out",
        metavar="FILE.zip",
        default=None,
        help="where to write the bundle (a folder: the default name in it); never inside the job",
    )
    p.add_argument(
        "--max-size",
        type=float,
        default=None,
        metavar="MiB",
        help="largest compiler input (all of compiler/model/), model.pt, .npz or NEFF to include (default 50)",
    )
    p.add_argument("--force", action="store_true", help="replace the output file if it exists")
    p.add_argument("--json", action="store_true", help="print the result (members, left out, missing) as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from neffbench.jobs.bundle import DEFAULT_LIMIT, MIB, BundleError, find_job_dir, make_bundle
    from neffbench.jobs.summary import human_bytes

    if args.max_size is not None and args.max_size < 0:
        print("neffbench bundle: --max-size must be 0 or more (MiB).", file=sys.stderr)
        return 1
    limit = DEFAULT_LIMIT if args.max_size is None else int(args.max_size * MIB)
    try:
        job_dir = find_job_dir(args.job, args.workdir)
        result = make_bundle(job_dir, args.out, size_limit=limit, force=args.force)
    except BundleError as exc:
        print(f"neffbench bundle: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    included = sum(size for _, size in result.included)
    print(result.path)
    print(
        f"  {plural(len(result.included), 'file')} included ({human_bytes(included)} before compression, "
        f"{human_bytes(result.path.stat().st_size)} zipped)"
    )
    if result.left_out:
        print(f"  {len(result.left_out)} left out ({human_bytes(sum(s for _, s, _ in result.left_out))}):")
        for rel, size, reason in result.left_out:
            print(f"    {rel}" + (f" ({human_bytes(size)})" if size else "") + f": {reason}")
    if result.missing:
        print(f"  not in the job directory: {', '.join(result.missing)}")
    return 0
