"""cpu: the job's module on this computer's CPU, labelled CPU everywhere (never a device figure): a cpu-check
job's TorchScript with its eager module timed beside it, else the eager module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neffbench.runs.runtimes.base import Host, RunChild, RunFailure, Runtime, Target
from neffbench.runs.runtimes.sessions import Session, TorchSession

if TYPE_CHECKING:
    from neffbench.runs.arrays import Arrays


class Cpu(Runtime):
    name = "cpu"
    label = "CPU"
    what = "the job's module on the CPU"

    @classmethod
    def lacks(cls, target: Target | None, host: Host) -> str | None:
        if target is None or target.job:
            return None
        return "a NEFF without its job has no module to run on the CPU"

    @classmethod
    def load(cls, run: RunChild, neff_info: Any, feeds: Arrays) -> Session:
        import torch

        from neffbench.backends import registry as backends
        from neffbench.runs import arrays

        args = arrays.tensors(feeds, list(feeds.arrays))
        out_names = run.output_names()
        if backends.makes_no_neff(run.req.get("backend")) and run.req.get("model_pt"):
            scripted = TorchSession(cls.name, torch.jit.load(run.req["model_pt"], map_location="cpu"), args, out_names)
            scripted.variant = "TorchScript (model.pt)"
            try:
                scripted.secondary = TorchSession(cls.name, run.rebuilt(), args, out_names)
                scripted.secondary.variant = "eager module"
            except RunFailure as exc:  # model.pt is the job's own graph: it still runs
                run.out.line(f"neffbench: the eager module is not timed beside model.pt: {exc}")
            return scripted
        eager = TorchSession(cls.name, run.rebuilt(), args, out_names)
        eager.variant = "eager module"
        return eager
