"""The memory verdict on the command line: ``--allow-over-memory``, and the warning or refusal ``check``, ``compile``
and ``sweep`` print before anything starts."""

from __future__ import annotations

import argparse
import sys

from neffbench.jobs.memory_verdict import OVERRIDE_FLAG, MemoryVerdict


def add_memory_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        OVERRIDE_FLAG,
        dest="allow_over_memory",
        action="store_true",
        help="start even when a job's memory estimate is more than this machine has in all (by default nothing "
        "is started then; an estimate above the free memory only warns)",
    )


def refused(verdict: MemoryVerdict, args: argparse.Namespace, *, refusal: str) -> bool:
    """Print the verdict (a warning, or an error when it blocks); True when nothing may start. ``refusal`` ends the
    closing line of a refusal, saying what was not done."""
    if verdict.level == "ok":
        return False
    allowed = bool(getattr(args, "allow_over_memory", False))
    if verdict.refused(allowed):
        print(f"error: memory: {verdict.sentence()}", file=sys.stderr)
        print(f"{args.spec}: it does not fit in this machine's memory; {refusal}.", file=sys.stderr)
        return True
    note = f" Allowed by {OVERRIDE_FLAG}." if verdict.blocks else ""
    print(f"warning: memory: {verdict.message}{note}", file=sys.stderr)
    return False
