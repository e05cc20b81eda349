"""``cpu-check``: torch.jit.trace on the CPU, as torch_neuronx.trace's last step runs it; no compiler, no NEFF."""

from __future__ import annotations

from typing import Any

from neffbench.backends.base import Backend, JobContext, Traced
from neffbench.kernels.api import Built

NO_NEFF_NOTE = "no NEFF (cpu-check)"


class CpuCheck(Backend):
    name = "cpu-check"
    label = "torch.jit.trace on the CPU (no NEFF)"
    short = "cpu-check (CPU trace only, no NEFF)"
    makes_neff = False
    runs_compiler = False
    neff_note = NO_NEFF_NOTE
    compiler_note = "cpu-check runs no compiler"
    trace_note = " (no NEFF, cpu-check)"

    @classmethod
    def no_neff_reason(cls) -> str | None:
        return "a cpu-check job makes no NEFF"

    @classmethod
    def advice(cls, facts: Any) -> list[str]:
        return [
            "To make NEFFs, install torch-neuronx and neuronx-cc from AWS's package index "
            "(see the README's Neuron section)."
        ]

    def trace(self, job: JobContext, spec: Any, built: Any, report: Any, kernel: Any) -> Traced:
        if built.state:
            job.out.event(self.state_event(built))
        return Traced(traced=job.cpu_trace(report, built, blocking=True))

    def verify(self, step: Traced, built: Any, spec: Any, reference: Any) -> dict[str, Any]:
        from neffbench.backends import verify as verifying  # torch: the worker's only

        return verifying.verify(
            step.traced, built, spec, reference, where="CPU (torch.jit trace; no NEFF, cpu-check)", on_device=False
        )

    @classmethod
    def reproduce_script(cls, spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None = None) -> str:
        from neffbench.backends import legacy_reproduce

        note = (
            "# The job that wrote this script used the cpu-check backend: it made no NEFF. This script\n"
            "# makes one, on a host with the Neuron toolchain.\n"
        )
        return legacy_reproduce.render(spec, job_id=job_id, built=built, weights=weights, note=note)
