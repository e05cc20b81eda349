"""``neffbench check``: validate a spec and list every problem by field."""

from __future__ import annotations

import argparse
import sys

from neffbench.cli.spec_args import add_spec_arguments, checked_spec
from neffbench.kernels import registry
from neffbench.kernels.api import describe_buckets
from neffbench.spec import spec_hash


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="validate a spec; exit 0 when it can be compiled, 2 with every problem",
                       description="Validate a spec (file or preset) with any overrides. Exit 0 when it can be "
                       "compiled (warnings are printed), 2 with every problem listed by field.")
    add_spec_arguments(p)
    from neffbench.jobs.protocol import BACKENDS

    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="also check what this backend does with the spec (auto: the one a compile would use); "
                   "torchneuron takes target and LNC from the instance, and says so")
    p.add_argument("--no-probe", action="store_true",
                   help="for kernels that run your code (module): check the spec only, without the pre-flight run "
                   "in a child process (resolve, bind, eager run, CPU trace)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spec = checked_spec(args, refusal="nothing can be compiled until they are fixed")
    if spec is None:
        return 2
    if _torchneuron_problems(args, spec):
        return 2
    if registry.for_spec(spec).runs_user_code and not args.no_probe:
        code = _preflight(args, spec)
        if code:
            return code
    print(f"{args.spec}: OK ({spec.name}, {describe_buckets(spec)}, spec hash {spec_hash(spec)[:8]})")
    return 0


def _torchneuron_problems(args: argparse.Namespace, spec) -> int:
    """What a TorchNeuron compile will not honour here (target, LNC, flags it adds); the number of errors."""
    from neffbench.cli.spec_args import print_problems
    from neffbench.jobs import cache, torchneuron

    if cache.predicted_backend(args.backend) != "torchneuron":
        return 0
    problems = torchneuron.problems(spec, torchneuron.host())
    print_problems(problems, file=sys.stderr)
    errors = sum(p.severity == "error" for p in problems)
    if errors:
        print(f"{args.spec}: {errors} error(s) for the torchneuron backend; nothing can be compiled with it until "
              "they are fixed.", file=sys.stderr)
    return errors


def _preflight(args: argparse.Namespace, spec) -> int:
    """Pre-flight of the first bucket in a probe child: what only running the user's code can tell."""
    from neffbench.probe.client import ProbeError, ask
    from neffbench.spec import to_dict

    try:
        report = ask("check", {"spec": to_dict(spec)})
    except ProbeError as exc:
        print(f"{args.spec}: pre-flight did not report: {exc}", file=sys.stderr)
        return 1
    problems = report.get("problems") or []
    if report.get("error"):
        problems = [{"severity": "error", "message": report["error"]}, *problems]
    for p in problems:
        print(f"{p['severity']}: pre-flight: {p['message']}", file=sys.stderr)
    errors = sum(p["severity"] == "error" for p in problems)
    if errors:
        print(f"{args.spec}: {errors} pre-flight error(s); nothing can be compiled until they are fixed.",
              file=sys.stderr)
        return 2
    interface = report.get("interface") or {}
    print(f"  NEFF inputs:  {', '.join(interface.get('inputs', [])) or '-'}")
    print(f"  NEFF outputs: {', '.join(interface.get('outputs', [])) or '-'}")
    return 0
