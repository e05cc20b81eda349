"""The compile worker's CPU trace with its graph checks (the cpu-check job itself, or a probe before a compile).

It takes the running :class:`~neffbench.workers.stages.Job`, for its output and its pre-flight gate.
"""

from __future__ import annotations

from typing import Any

from neffbench.backends.tracing import cpu_check_trace
from neffbench.usercode import errors as user_errors


def cpu_trace(job: Any, report: Any, built: Any, *, blocking: bool) -> Any:
    """The CPU trace (the cpu-check job itself, or a probe before a Neuron compile) and its graph checks.

    The probe is stricter than torch_neuronx.trace in places, so before a Neuron compile its own
    failure is a warning, never a reason not to compile; but a trace that differs from the eager module on other
    inputs than its example's is an error there too: the compiler would get the same graph.
    """
    from neffbench.backends.eager import copies
    from neffbench.backends.verify import generalises
    from neffbench.jobs import preflight
    from neffbench.spec import load

    try:
        traced, tracer_warnings = cpu_check_trace(built.module, copies(built.inputs))
    except Exception as exc:  # noqa: BLE001 - the user's module may fail the trace any way it likes
        if blocking:
            raise
        report.warning(
            f"the CPU trace probe failed ({user_errors.describe(exc)}); the Neuron compile "
            "goes ahead, since torch_neuronx.trace is more lenient in places."
        )
        job.preflight_gate(report, final=True)
        return None
    job.tracer_warnings = tracer_warnings
    job.cpu_traced = traced
    tracer_warnings.report(report)
    preflight.analyze_graph(report, traced, built.input_names, built.output_names)
    preflight.check_module_tensors(report, built.module, traced)
    if not blocking and not report.errors:  # cpu-check's own verification makes this comparison, and more
        generalises(report, traced, built, load(job.job_dir / "spec.toml"), tracer_warnings)
    job.preflight_gate(report, final=True)
    return traced
