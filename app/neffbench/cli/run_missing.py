"""``neffbench run JOB_DIR --missing-buckets``: run the jobs of a compile's buckets that have no run yet, in turn."""

from __future__ import annotations

import argparse
import sys

from neffbench.cli.run_cmd import EXIT_CANCELLED, EXIT_INVALID, EXIT_OK, run_one

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
