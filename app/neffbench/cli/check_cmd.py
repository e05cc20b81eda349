"""``neffbench check``: validate a spec, gate it on memory, run its pre-flight (for kernels that run the user's code),
and list every problem by field."""

from __future__ import annotations

import argparse
import sys

from neffbench.cli.spec_args import add_spec_arguments, checked_spec
from neffbench.kernels import registry
from neffbench.kernels.bucket_words import buckets_text
from neffbench.spec import spec_hash
from neffbench.words import plural


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="validate a spec; exit 0 when it can be compiled, 2 with every problem",
        description="Validate a spec (file or preset) with any overrides. Exit 0 when it can be "
        "compiled (warnings are printed), 2 with every problem listed by field.",
    )
    add_spec_arguments(p)
    from neffbench.backends.registry import CHOICES as BACKENDS

    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="also check what this backend does with the spec (auto: the one a compile would use); "
        "torchneuron takes target and LNC from the instance, and says so",
    )
    p.add_argument(
        "--no-probe",
        action="store_true",
        help="for kernels that run your code (module): check the spec only, without the pre-flight run "
        "in a child process (resolve, bind, eager run, CPU trace)",
    )
    from neffbench.cli.memory_gate import add_memory_option

    add_memory_option(p)
    p.epilog = (
        "Exit codes: 0 the spec can be compiled (every bucket pre-flighted for kernels that run your code), "
        "1 pre-flight did not finish (it timed out, after compiler.timeout seconds or 300, or the probe "
        "crashed), 2 problems, each listed by field (also a memory estimate above all this machine has, "
        "unless --allow-over-memory)."
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spec = checked_spec(args, refusal="nothing can be compiled until they are fixed")
    if spec is None:
        return 2
    if _backend_problems(args, spec):
        return 2
    from neffbench.cli.memory_gate import refused
    from neffbench.jobs.memory_verdict import OVERRIDE_FLAG, spec_verdict

    if refused(spec_verdict(spec, args.backend), args, refusal=f"it cannot be compiled here without {OVERRIDE_FLAG}"):
        return 2
    digest = None
    if registry.for_spec(spec).runs_user_code and not args.no_probe:
        code, digest = _preflight(args, spec)
        if code:
            return code
    kernel = registry.for_spec(spec)
    buckets = kernel.buckets(spec)
    described = f"{plural(len(buckets), 'bucket')}: {buckets_text(buckets)}"
    print(f"{args.spec}: OK ({spec.name}, {described}, spec hash {spec_hash(spec, digest)[:8]})")
    if len(buckets) > 1:  # each bucket is a job of its own, named by its own hash
        from neffbench.kernels.bucket_words import bucket_label

        print(
            "  each bucket's job: "
            + ", ".join(f"{bucket_label(b)} {spec_hash(kernel.for_bucket(spec, b), digest)[:8]}" for b in buckets)
        )
    return 0


def _backend_problems(args: argparse.Namespace, spec) -> int:
    """What the compile's backend will not honour here (TorchNeuron: target, LNC, flags it adds); the number of
    errors."""
    from neffbench.backends import registry
    from neffbench.cli.spec_args import print_problems
    from neffbench.jobs import cache

    backend = registry.get(cache.predicted_backend(args.backend))
    problems = backend.spec_problems(spec)
    if not problems:
        return 0
    print_problems(problems, file=sys.stderr)
    errors = sum(p.severity == "error" for p in problems)
    if errors:
        print(
            f"{args.spec}: {plural(errors, 'error')} for the {backend.name} backend; nothing can be compiled with it until "
            "they are fixed.",
            file=sys.stderr,
        )
    return errors


EXIT_OK, EXIT_PREFLIGHT_UNFINISHED, EXIT_INVALID = 0, 1, 2


def _preflight(args: argparse.Namespace, spec) -> tuple[int, str | None]:
    """Pre-flight of every bucket in one warm probe child (the first pays for the imports): what only running
    the user's code can tell. Prints which buckets were checked; never OK for one that was not. Returns the exit
    code and the digest of the files the build read (the spec hash covers them)."""
    from neffbench.kernels.bucket_words import bucket_label
    from neffbench.probe.client import DEFAULT_TIMEOUT_S, ProbeError, WarmProbe
    from neffbench.spec import to_dict

    kernel = registry.for_spec(spec)
    buckets = kernel.buckets(spec)
    timeout = spec.compiler.timeout or DEFAULT_TIMEOUT_S
    from neffbench.jobs.cache import predicted_backend

    facts = {"backend": predicted_backend(args.backend)}  # what pre-flight says of complex numbers depends on it
    probe = WarmProbe()
    checked: list[str] = []
    errors = 0
    interface: dict = {}
    digest = None
    seen: set[str] = set()  # a warning every bucket gives is printed once
    try:
        for i, bucket in enumerate(buckets):
            label = bucket_label(bucket)
            try:
                report = probe.ask(
                    "check", {"spec": to_dict(spec), "bucket": bucket, "brief": i > 0, **facts}, timeout=timeout
                )
            except ProbeError as exc:
                unchecked = ", ".join(bucket_label(b) for b in buckets[i:])
                print(
                    f"{args.spec}: pre-flight of bucket {label} did not finish: {exc} Checked: "
                    f"{', '.join(checked) or 'none'}; not checked: {unchecked}.",
                    file=sys.stderr,
                )
                return EXIT_PREFLIGHT_UNFINISHED, None
            errors += _print_report(report, label if len(buckets) > 1 else "", seen)
            checked.append(label)
            interface = interface or report.get("interface") or {}
            digest = digest or (report.get("sources") or {}).get("digest")
    finally:
        probe.close()
    if errors:
        print(
            f"{args.spec}: {plural(errors, 'pre-flight error')}; nothing can be compiled until they are fixed.",
            file=sys.stderr,
        )
        return EXIT_INVALID, None
    print(f"  pre-flight checked {len(checked)} of {plural(len(buckets), 'bucket')}: {', '.join(checked)}")
    print(f"  NEFF inputs:  {', '.join(interface.get('inputs', [])) or '-'}")
    print(f"  NEFF outputs: {', '.join(interface.get('outputs', [])) or '-'}")
    return EXIT_OK, digest


def _print_report(report: dict, label: str, seen: set[str]) -> int:
    """The bucket's problems on stderr (its traceback cut to the user's frames, a warning an earlier bucket gave
    left out); the number of errors."""
    from neffbench.usercode.tracebacks import user_frames

    problems = report.get("problems") or []
    if report.get("error"):
        problems = [{"severity": "error", "message": report["error"]}, *problems]
    where = f" [{label}]" if label else ""
    for p in problems:
        if p["severity"] == "warning" and p["message"] in seen:
            continue
        seen.add(p["message"])
        print(f"{p['severity']}: pre-flight{where}: {p['message']}", file=sys.stderr)
    frames = user_frames(report["traceback"]) if report.get("traceback") else ""
    if 'File "' in frames:
        print("Where in your code (frames of the workbench and libraries left out):", file=sys.stderr)
        print(frames, file=sys.stderr)
    return sum(p["severity"] == "error" for p in problems)
