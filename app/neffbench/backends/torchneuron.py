"""``torchneuron``: torch.compile(backend="neuron"), TorchNeuron (torch-neuronx 2.13.3+, SDK 2.33+, Trn2/Trn3).

Its caches, debug directory and log are pointed into the job (torchneuron_compile.py); it keeps no
TorchScript, so a job has no model.pt, and its NEFFs sit in neff_cache/ with copies in debug/.
"""

from __future__ import annotations

import os
from typing import Any

from neffbench.backends.base import Backend, JobContext, Traced
from neffbench.kernels.api import Built


class TorchNeuron(Backend):
    name = "torchneuron"
    label = 'torch.compile(backend="neuron") (TorchNeuron, SDK 2.33+)'
    short = "torchneuron (torch.compile)"
    keeps_model_pt = False
    neff_copies = ("debug",)  # TorchNeuron's debug directory keeps one of each NEFF it put in the cache
    trace_verb = "compiled with torch.compile"
    flavour_needed = "native"
    isolates_environment = True
    keeps_state_as = (
        "buffer mutation: the forward's in-place writes into the state's buffers, functionalized by torch.compile "
        "(AOT Autograd) and written back, so the compiled module keeps them on the device"
    )

    @classmethod
    def wrong_flavour(cls, version: str | None, is_what: str) -> str:
        return (
            f"the torchneuron backend was requested but torch_neuronx {version} is {is_what}: use --backend "
            "neuron, or install torch-neuronx 2.13.3 or later (Neuron SDK 2.33+) on a Trn2/Trn3 instance"
        )

    @classmethod
    def cache_part(cls, spec: Any) -> Any:
        from neffbench.backends import torchneuron_options as tn

        # What it compiles for comes from the environment: the target override and the LNC count too.
        return {
            "flags": tn.cc_flags(spec),
            "opt_level": tn.opt_level(spec),
            "target_override": os.environ.get(tn.TARGET_ENV),
            "lnc": os.environ.get(tn.LNC_ENV),
        }

    @classmethod
    def spec_problems(cls, spec: Any) -> list[Any]:
        from neffbench.backends import torchneuron_options as tn

        return tn.problems(spec, tn.host())

    @classmethod
    def advice(cls, facts: Any) -> list[str]:
        if facts.devices:
            return [
                f"TorchNeuron compiles on a Trn2/Trn3 instance only: a Neuron device is present "
                f"({facts.devices[0]}), and outputs are verified on it."
            ]
        return [
            "TorchNeuron compiles on a Trn2/Trn3 instance only and this host has no Neuron device under "
            "/dev/neuron*, so its compiles fail here; the legacy neuron backend (torch-neuronx 2.9 and "
            "earlier, SDK ≤ 2.31) compiles without one."
        ]

    @classmethod
    def status_warning(cls, facts: Any) -> str | None:
        # This TorchNeuron release compiles on a Trainium instance only: every compile here would fail.
        return None if facts.devices else "torchneuron, needs a Trn2/Trn3 device"

    @classmethod
    def complex_advice(
        cls, ops: str, outside: list[Any], neuronx_cc: str | None, torch_version: str
    ) -> list[tuple[str, str]] | None:
        from neffbench.backends.complex_ops import torchneuron_advice  # torch: only in the worker and the probe

        return torchneuron_advice(ops, torch_version)

    def trace(self, job: JobContext, spec: Any, built: Any, report: Any, kernel: Any) -> Traced:
        from neffbench.backends import torchneuron_compile

        torchneuron_compile.add_problems(report, spec)
        job.cpu_trace(report, built, blocking=False)  # its graph checks name unused inputs for the arrays
        return Traced(compiled=torchneuron_compile.compile_job(job, self, spec, built, report))

    def verify(self, step: Traced, built: Any, spec: Any, reference: Any) -> dict[str, Any]:
        from neffbench.backends import verify as verifying  # torch: the worker's only

        compiled = step.compiled
        try:
            return verifying.verify(
                compiled.call,
                built,
                spec,
                reference,
                where=compiled.where,
                on_device=compiled.on_device,
                keeps_state=bool(built.state),
            )
        finally:
            compiled.close()

    @classmethod
    def reproduce_script(cls, spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None = None) -> str:
        from neffbench.backends import torchneuron_reproduce

        return torchneuron_reproduce.render(spec, job_id=job_id, built=built, weights=weights)
