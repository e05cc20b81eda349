"""The toolchain's facts as found on this host: one ``Component`` per piece, and ``Facts`` holding them all."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field


@dataclass
class Component:
    name: str
    found: bool
    version: str | None = None
    detail: str = ""


@dataclass
class Facts:
    python: Component
    torch: Component
    pyside6: Component
    pyqtgraph: Component
    torch_neuronx: Component
    neuronx_cc: Component
    devices: list[str] = field(default_factory=list)
    display: str | None = None
    host: str = ""
    # What runs NEFFs after a compile (nrtpy, spike) and the tools around them (neuron-ls, the profilers).
    runtimes: list[Component] = field(default_factory=list)
    # "native" (TorchNeuron) or "legacy" (torch_neuronx.trace), told by version or by the trace attribute.
    torch_neuronx_flavour: str | None = None

    @property
    def neuron_toolchain(self) -> bool:
        return self.torch_neuronx.found and self.neuronx_cc.found


def dist_version(dist: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
