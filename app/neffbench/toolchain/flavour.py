"""Which flavour a torch_neuronx is: TorchNeuron (native, torch.compile) or the legacy XLA one (torch_neuronx.trace)."""

from __future__ import annotations

import re

from neffbench import procs
from neffbench.versions import torch_neuronx_version

# torch-neuronx 2.13.3.0 (Neuron SDK 2.33) is the first TorchNeuron release: the native PyTorch backend,
# torch.compile(backend="neuron"), without torch_neuronx.trace. The XLA flavour ends with 2.9.0.2.15.
NATIVE_FROM = (2, 13, 3)
FLAVOUR_LABELS = {
    "native": 'TorchNeuron, the native flavour (torch.compile backend "neuron", no torch_neuronx.trace; '
    "SDK 2.33+, Trn2/Trn3)",
    "legacy": "the legacy XLA flavour (torch_neuronx.trace; SDK ≤ 2.31)",
}


def neuronx_import_failure(message: str) -> str:
    """What a failed ``import torch_neuronx`` means, from the first line of its error."""
    if "WRONG PACKAGE" in message:
        return "the PyPI placeholder is installed (real torch-neuronx comes from AWS's package index)"
    return message


def release_of(version: str | None) -> tuple[int, int, int] | None:
    """(2, 13, 3) from ``2.13.3.0+abc``; None when the version does not start with three numbers."""
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def neuronx_flavour(version: str | None, has_trace: bool | None = None) -> str | None:
    """``native`` (TorchNeuron) for version 2.13.3+ or a module without ``trace``, ``legacy`` otherwise;
    None when neither the version nor the module tells."""
    release = release_of(version)
    if (release is not None and release >= NATIVE_FROM) or has_trace is False:
        return "native"
    if release is not None or has_trace:
        return "legacy"
    return None


def flavour_reason(version: str | None, flavour: str | None) -> str:
    """Why ``flavour``, in words: ``version 2.13.3 or later`` or ``it has no torch_neuronx.trace``."""
    if flavour == "native":
        release = release_of(version)
        return "version 2.13.3 or later" if release and release >= NATIVE_FROM else "it has no torch_neuronx.trace"
    if flavour == "legacy":
        return "a version before 2.13.3, with torch_neuronx.trace"
    return "its flavour could not be told"


# What a warm-start server preloads on a TorchNeuron host (see warm_preload).
NATIVE_PRELOAD = (*procs.PRELOAD, "torch._dynamo")


def warm_preload() -> tuple[str, ...]:
    """What a warm-start server on this host imports for the workers it forks: torch, and with TorchNeuron installed
    dynamo too, since every TorchNeuron compile goes through torch.compile, whose import of dynamo costs each
    worker about a CPU-second (elsewhere no worker needs it, and the server would only carry it)."""
    if neuronx_flavour(torch_neuronx_version()) == "native":
        return NATIVE_PRELOAD
    return procs.PRELOAD
