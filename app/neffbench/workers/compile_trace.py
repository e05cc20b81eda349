"""The compile worker's traces: torch_neuronx.analyze, the CPU trace with its graph checks, torch_neuronx.trace.

Each takes the running :class:`~neffbench.workers.compile_job.Job`, for its output and its directory.
"""

from __future__ import annotations

import time
from typing import Any

from neffbench.jobs.backends import Backend, JobFailure, cpu_check_trace, neuron_trace
from neffbench.jobs.compiler_command import LOGFILE_NAME, equivalent_command, job_compiler_args
from neffbench.jobs.logtail import LogTail


def analyze(job: Any, backend: Backend, built: Any) -> None:
    """torch_neuronx.analyze where the installed release has it: every operator neuronx-cc cannot
    compile, with where it is called, before the compile itself spends minutes finding out."""
    run_analyze = getattr(backend.torch_neuronx, "analyze", None)
    if run_analyze is None:
        return
    workdir = job.job_dir / "analyze"
    t0 = time.perf_counter()
    try:
        result = run_analyze(built.module, built.inputs, compiler_workdir=str(workdir))
    except Exception as exc:  # noqa: BLE001 - analyze failing says nothing certain about the compile
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = f"torch_neuronx.analyze failed ({type(exc).__name__}: {first}); the compile goes ahead."
        job.out.line(f"neffbench: warning: {message}")
        job.out.event({"type": "warning", "message": message})
        return
    job.metric("analyze_s", round(time.perf_counter() - t0, 4), "s")
    unsupported = result.get("unsupported_operators") or []
    job.out.event({"type": "analyze", "support_percentage": result.get("support_percentage"),
                    "supported_operators": result.get("supported_operators"), "unsupported_operators": [
                        {k: op.get(k) for k in ("kind", "failureAt", "call")} for op in unsupported]})
    job.out.line(f"neffbench: torch_neuronx.analyze: {result.get('support_percentage')} of the operators "
                  "are supported")
    for op in unsupported:
        call = str(op.get("call") or "").strip().splitlines()
        where = f", called at {call[0]}" if call else ""
        message = f"neuronx-cc cannot compile {op.get('kind')} (failed at {op.get('failureAt')}){where}."
        job.out.line(f"neffbench: warning: {message}")
        job.out.event({"type": "warning", "message": message})


def cpu_trace(job: Any, report: Any, built: Any, *, blocking: bool) -> Any:
    """The CPU trace (the cpu-check job itself, or a probe before a Neuron compile) and its graph checks.

    The probe is stricter than torch_neuronx.trace in places, so before a Neuron compile its own
    failure is a warning, never a reason not to compile.
    """
    from neffbench.jobs import preflight

    try:
        traced, tracer_warnings = cpu_check_trace(built.module, built.inputs)
    except Exception as exc:  # noqa: BLE001 - the user's module may fail the trace any way it likes
        if blocking:
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
        report.warning(f"the CPU trace probe failed ({type(exc).__name__}: {first}); the Neuron compile "
                       "goes ahead, since torch_neuronx.trace is more lenient in places.")
        job.preflight_gate(report, final=True)
        return None
    for message in tracer_warnings:
        report.warning(message)
    preflight.analyze_graph(report, traced, built.input_names, built.output_names)
    job.preflight_gate(report, final=True)
    return traced


def trace_neuron(job: Any, backend: Backend, spec: Any, module: Any, inputs: tuple[Any, ...]) -> Any:
    compiler_dir = job.job_dir / "compiler"
    compiler_dir.mkdir(exist_ok=True)
    args = job_compiler_args(spec, compiler_dir)
    job.out.event({"type": "compiler_command", "requested": equivalent_command(compiler_dir, args),
                    "requested_args": args})
    started: list[float] = []

    def compiler_started() -> None:
        started.append(time.perf_counter())
        job.stage = "compiling"
        job.out.stage("compiling")

    with LogTail(job.out, compiler_dir, compiler_dir / LOGFILE_NAME, compiler_started):
        traced = neuron_trace(backend, module, inputs, compiler_dir, args)
    if started:
        job.metric("compile_s", round(time.perf_counter() - started[0], 4), "s")
    neffs = sorted(compiler_dir.glob("**/*.neff"))
    if not neffs:
        raise JobFailure("torch_neuronx.trace returned but no NEFF was found under compiler/")
    for neff in neffs:
        job.out.line(f"neffbench: NEFF {neff.relative_to(job.job_dir)} ({neff.stat().st_size} bytes)")
    return traced
