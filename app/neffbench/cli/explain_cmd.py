"""``neffbench explain``: what a compiler log says happened, and why."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        help="explain compiler output: outcome, the first error and its code, exit status, passes",
        description="Read compiler output (a log-neuron-cc.txt, a pasted stdout, a job's job.log or the job "
        "directory itself, a file holding several compiles, or - for standard input) and explain it: the "
        "outcome, the first error with its code and the code's documented meaning, the exit status and what "
        "it means, the passes as a timeline, the compiler version, the command line and the lines around the "
        "first error. Exit 0 when the output was read (whatever it says), 1 when it cannot be read.",
    )
    p.add_argument("log", metavar="LOG", help="a log file, a job directory, or - for standard input")
    p.add_argument(
        "--all-errors",
        action="store_true",
        help="show every error after the first, each with its line and message (by default only their line "
        "numbers; --json always lists them)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (status, exit_code, first_error, errors, codes, passes, "
        "compiler_version, command, and more)",
    )
    p.set_defaults(func=run_explain)


def run_explain(args: argparse.Namespace) -> int:
    from neffbench.compilerlog.explain import ExplainError, explain
    from neffbench.jobs.explained import job_dir_of

    job_dir = job_dir_of(args.log) if args.log != "-" else None
    if job_dir is not None and (job_dir / "job.json").is_file():
        return _explain_job(job_dir, as_json=args.json, all_errors=args.all_errors)
    try:
        exp = explain(args.log)
    except ExplainError as exc:
        print(f"neffbench explain: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(exp.to_json(), indent=2, ensure_ascii=False))
        return 0
    from neffbench.compilerlog.render import explanation_lines

    print("\n".join(explanation_lines(exp, all_errors=args.all_errors)))
    return 0


def _explain_job(job_dir, *, as_json: bool, all_errors: bool = False) -> int:
    """A job, explained as the window does: its outcome and cause from its record, then its compiler log's
    explanation when a compiler ran (a cpu-check job's log has no compiler outcome to explain)."""
    from neffbench.api.explanation import Explanation

    explained = Explanation.of(job_dir)
    if as_json:
        print(json.dumps(explained.to_json(), indent=2, ensure_ascii=False, default=str))
        return 0
    print("\n".join(explained.lines(all_errors=all_errors)))
    return 0
