"""The probe: ``python -m neffbench.workers.probe check|prepare|preview|structure|REQUEST`` reads a JSON request on
stdin, prints one JSON report.

trial: the kernel's build alone (the module kernel's: construct, then call once on the example inputs).
check: the kernel's build, the eager run, the CPU trace and pre-flight, and per-tensor statistics and histograms of
inputs and outputs. prepare: what a compile checks before any job. preview: the spec's preview, pickled into a
file (the window's first previews, while its own torch loads). structure: a job's structure, for a job compiled
before structures existed (``neffbench.structure.rebuild``). A kernel may bring requests of its own
(``Kernel.probe_requests``; the module kernel's ``resolve``), answered the same way.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from neffbench.procs import exit_now, serve_lines
from neffbench.words import message_text

HISTOGRAM_BINS = 48
# Above this many elements statistics and histograms use an evenly strided sample.
SAMPLE = 1_000_000


def _sentence(exc: BaseException) -> str:
    return message_text(str(exc)) or type(exc).__name__


def _tensor_report(name: str, tensor: Any) -> dict[str, Any]:
    """Statistics and a histogram of a tensor's values (a sparse one's as dense, a quantized one's dequantized);
    for one without values to read (meta, nested), none, and a note saying why."""
    import numpy as np
    import torch

    from neffbench.kernels.plots import histogram, stats
    from neffbench.usercode.tensors import UnreadableTensor, dense

    note = None
    try:
        flat = dense(tensor).reshape(-1)
    except UnreadableTensor as exc:
        flat, note = torch.zeros(0), f"no statistics: {exc}"
    if flat.numel() > SAMPLE:
        flat = flat[:: flat.numel() // SAMPLE + 1]
    values = flat.to(torch.float64).numpy() if not flat.is_complex() else np.abs(flat.numpy())
    hist = histogram(name, values, bins=HISTOGRAM_BINS)
    return {
        "name": name,
        "dtype": str(tensor.dtype).replace("torch.", ""),
        "shape": list(tensor.shape) if not tensor.is_nested else [],
        "stats": stats(values),
        "histogram": {"edges": np.asarray(hist.x).tolist(), "counts": np.asarray(hist.y).tolist()},
        **({"note": note} if note else {}),
    }


_LAST_USER_MODULES: list[str] = []


def _recorder() -> Any:
    from neffbench.usercode.recorder import Recorder

    return Recorder()


def _failure(exc: BaseException) -> dict[str, Any]:
    """A KernelError's sentence, with the whole traceback of what the user's code raised kept beside it."""
    from neffbench.usercode.errors import format_traceback

    cause = exc.__cause__ if exc.__cause__ is not None else exc
    return {"ok": False, "error": str(exc), "traceback": format_traceback(cause) if cause is not exc else ""}


def prepare(request: dict[str, Any]) -> dict[str, Any]:
    """What a compile checks before starting any job: the kernel's prepare (resolve, make, bind) and the files
    that read."""
    from neffbench.kernels import registry
    from neffbench.kernels.api import KernelError
    from neffbench.spec import from_dict

    spec = from_dict(request["spec"])
    kernel = registry.for_spec(spec)
    spec = kernel.for_bucket(spec, kernel.buckets(spec)[0])
    recorder = _recorder()
    try:
        with recorder:
            made = kernel.prepare(spec)
    except KernelError as exc:
        return _failure(exc)
    return {"ok": True, "sources": recorder.result(made)}


def trial(request: dict[str, Any]) -> dict[str, Any]:
    """The kernel's build once for the first bucket (the module kernel's constructs the module and calls it on the
    example inputs), so that a constructor or shape mismatch is found when the form is resolved, not at compile.
    ``step`` is the build's step it failed in (``forward``, ``outputs``; empty: before the first call)."""
    from neffbench.kernels import registry, steps
    from neffbench.kernels.api import KernelError
    from neffbench.spec import from_dict

    spec = from_dict(request["spec"])
    kernel = registry.for_spec(spec)
    bucket = kernel.buckets(spec)[0]
    spec = kernel.for_bucket(spec, bucket)
    reached = [""]
    try:
        with steps.listening(reached.append):
            kernel.build(spec)
    except KernelError as exc:
        return {"ok": False, "error": str(exc), "step": reached[-1], "bucket": bucket}
    return {"ok": True, "bucket": bucket}


def check(request: dict[str, Any]) -> dict[str, Any]:
    import torch

    from neffbench.backends import complex_ops, eager
    from neffbench.backends import registry as backends
    from neffbench.backends.tracing import cpu_check_trace
    from neffbench.backends.verify import generalises
    from neffbench.jobs import preflight, preflight_effects
    from neffbench.kernels import registry
    from neffbench.kernels.api import KernelError
    from neffbench.spec import from_dict

    spec = from_dict(request["spec"])
    kernel = registry.for_spec(spec)
    spec = kernel.for_bucket(spec, request.get("bucket") or kernel.buckets(spec)[0])
    report = preflight.Report()
    timings: dict[str, float] = {}
    out: dict[str, Any] = {"ok": True, "bucket": kernel.buckets(spec)[0]}
    t0 = time.perf_counter()
    recorder = _recorder()
    try:
        with recorder:
            built = kernel.build(spec)
    except KernelError as exc:
        report.error(str(exc))
        return {**out, **_failure(exc), "error": None, "ok": False, **report.to_json()}
    timings["build_s"] = time.perf_counter() - t0
    out["sources"] = recorder.result(built.module)
    for message in built.warnings:
        report.warning(message)
    backend = request.get("backend") or "cpu-check"
    preflight.check_inputs(report, built, spec, makes_neff=backends.get(backend).makes_neff)
    called = eager.call(built)
    reference = called.outputs
    compiler = None
    # Asked only when it matters: neuronx-cc --version takes seconds.
    if called.complex_found and backends.get(backend).asks_compiler_version:
        from neffbench.toolchain.host import neuronx_cc_version

        compiler = neuronx_cc_version()
    found = called.complex_found
    for severity, sentence in complex_ops.advice(found, backends.get(backend), compiler, torch.__version__):
        (report.error if severity == "error" else report.warning)(sentence)
    preflight.check_outputs(report, built.output_names, reference)
    preflight_effects.check_effects(report, built, called.effects, kernel.state_remedy)
    preflight_effects.check_repeatable(report, built, reference, called.effects)
    written = [w.name for w in called.effects.state_writes()]
    if written:  # what the window's "Keep as state" keeps (Kernel.with_state)
        out["state_found"] = written
    t1 = time.perf_counter()
    try:
        traced, tracer_warnings = cpu_check_trace(built.module, eager.copies(built.inputs))
        tracer_warnings.report(report)
        preflight.analyze_graph(report, traced, built.input_names, built.output_names)
        preflight.check_module_tensors(report, built.module, traced)
        if not report.errors:  # a graph already refused needs no second opinion
            generalises(report, traced, built, spec, tracer_warnings)
    except Exception as exc:  # noqa: BLE001 - the user's module may fail the trace any way it likes
        report.error(f"the CPU trace failed: {type(exc).__name__}: {_sentence(exc)}")
    timings["trace_s"] = time.perf_counter() - t1
    if not request.get("brief"):  # a later bucket of `neffbench check`: its problems are what is asked
        out["inputs"] = [_tensor_report(n, t) for n, t in zip(built.input_names, built.inputs)]
        out["outputs"] = [
            _tensor_report(n, t)
            for n, t in zip(built.output_names or [f"output{i}" for i in range(len(reference))], reference)
        ]
    out["info"] = {k: v for k, v in built.info.items() if k != "wrapper"}
    out["timings"] = timings
    out["ok"] = not report.errors
    return {**out, **report.to_json()}


def preview(request: dict[str, Any]) -> dict[str, Any]:
    """The spec's preview (neffbench.spec.previewing), pickled into the file ``request["path"]`` names: the
    window's first previews, while its own torch loads. A preview is plain data (numpy, no torch tensors), so
    the window reads it without importing torch."""
    import pickle

    from neffbench.spec import from_dict, previewing

    result = previewing.compute(from_dict(request["spec"]), request.get("bucket"))
    if isinstance(result, str):
        return {"ok": True, "refused": result}
    Path(request["path"]).write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    return {"ok": True, "path": request["path"]}


def structure(request: dict[str, Any]) -> dict[str, Any]:
    """The structure of a job compiled before structures existed: its module built again from its spec, kept in it."""
    from neffbench.structure.rebuild import answer as structure_of

    return structure_of(request)


COMMANDS = {"check": check, "prepare": prepare, "preview": preview, "structure": structure, "trial": trial}


def _handler(command: str) -> Any:
    """The workbench's own request, or one a kernel brings (``Kernel.probe_requests``: the module kernel's resolve)."""
    if command in COMMANDS:
        return COMMANDS[command]
    import pkgutil

    from neffbench.kernels import registry

    for kernel in registry.available():
        if command in kernel.probe_requests:
            return pkgutil.resolve_name(kernel.probe_requests[command])
    return None


def last_user_modules() -> list[str]:
    """The user's modules the last request imported (a process that goes on to other work forgets them)."""
    return list(_LAST_USER_MODULES)


def answer(command: str, request: dict[str, Any]) -> dict[str, Any]:
    """One request's report. The user modules the previous request imported are forgotten first, so that this
    one imports (and sees) the user's files as they are now, not as a warm probe last saw them."""
    from neffbench.usercode.recorder import forget_user_modules

    forget_user_modules(_LAST_USER_MODULES)
    _LAST_USER_MODULES.clear()
    watching = _recorder()
    try:
        with watching:
            return _handler(command)(request)
    except Exception as exc:  # noqa: BLE001 - whatever the user's code does ends as a report
        from neffbench.kernels.api import KernelError
        from neffbench.usercode.errors import describe, format_traceback

        traceback.print_exc(file=sys.stderr)
        # A KernelError is already the sentence for the user; anything else is named by its class.
        error = str(exc) if isinstance(exc, KernelError) else describe(exc)
        return {"ok": False, "error": error, "traceback": format_traceback(exc)}
    finally:
        _LAST_USER_MODULES.extend(watching.modules)


def serve() -> int:
    """A warm probe: torch imported once, then one JSON request per stdin line, one report per stdout line.

    Libraries the user's code imports (transformers) stay imported between requests, which is most
    of a check's time; the user's own files are executed afresh whenever they change.
    """
    import torch  # noqa: F401 - the point of a warm probe

    from neffbench.spec import previewing

    previewing.preload()  # the window's first preview is often the first request
    return serve_lines(lambda message: answer(message["command"], message.get("request") or {}), default=str)


def main(argv: list[str]) -> int:
    from neffbench.procs import watch

    # The user's code goes with us if the window dies; no PDEATHSIG: short-lived threads start probes.
    watch(pdeathsig=False)
    warnings.simplefilter("ignore", DeprecationWarning)
    if argv == ["serve"]:
        return serve()
    if len(argv) != 1 or _handler(argv[0]) is None:
        print(
            "usage: python -m neffbench.workers.probe check|prepare|preview|structure|<a kernel's request> < request.json, "
            "or serve",
            file=sys.stderr,
        )
        return 2
    report = answer(argv[0], json.loads(sys.stdin.read() or "{}"))
    sys.stdout.write(json.dumps(report, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]), exit_functions=False)
