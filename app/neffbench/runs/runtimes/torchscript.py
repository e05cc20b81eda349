"""torchscript: the job's model.pt (torch_neuronx.trace's TorchScript, which holds the NEFF) loaded after
``import torch_neuronx``, which places it on a NeuronCore."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neffbench.runs.runtimes.base import Host, RunChild, Runtime, Target
from neffbench.runs.runtimes.sessions import Session, TorchSession

if TYPE_CHECKING:
    from neffbench.runs.arrays import Arrays


class TorchScript(Runtime):
    name = "torchscript"
    label = "NeuronCore (TorchScript)"
    on_device = True
    packages = (("torch_neuronx", "torch-neuronx"),)
    keeps_state_on_device = True  # torch_neuronx.trace's module holds its state on the device

    @classmethod
    def lacks(cls, target: Target | None, host: Host) -> str | None:
        if target is None:
            return "TorchNeuron jobs have no model.pt" if host.flavour == "native" else None
        return None if target.neuron_model_pt else "the job has no model.pt traced by torch_neuronx"

    @classmethod
    def load(cls, run: RunChild, neff_info: Any, feeds: Arrays) -> Session:
        import torch
        import torch_neuronx  # noqa: F401 - registers the Neuron ops model.pt calls

        from neffbench.runs import arrays

        inputs, _state = arrays.split(feeds)
        return TorchSession(
            cls.name, torch.jit.load(run.req["model_pt"]), arrays.tensors(feeds, inputs), run.output_names()
        )
