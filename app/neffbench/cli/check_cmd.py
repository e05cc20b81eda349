"""``neffbench check``: validate a spec and list every problem by field."""

from __future__ import annotations

import argparse
import sys

from neffbench.cli.spec_args import add_spec_arguments, checked_spec
from neffbench.kernels.api import describe_buckets
from neffbench.spec import spec_hash


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="validate a spec; exit 0 when it can be compiled, 2 with every problem",
                       description="Validate a spec (file or preset) with any overrides. Exit 0 when it can be "
                       "compiled (warnings are printed), 2 with every problem listed by field.")
    add_spec_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spec = checked_spec(args, refusal="nothing can be compiled until they are fixed")
    if spec is None:
        return 2
    print(f"{args.spec}: OK ({spec.name}, {describe_buckets(spec)}, spec hash {spec_hash(spec)[:8]})")
    return 0
