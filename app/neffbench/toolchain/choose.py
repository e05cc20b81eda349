"""Which backend a compile gets, whether torch_neuronx.trace gets cpu_backend, and which stack (legacy Neuron
venv or not) the host is.

The answers are backend names (``neuron``, ``torchneuron``, ``cpu-check``): the toolchain sits below the
backend classes (neffbench.backends) and tells them apart by name only here, where the choice is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neffbench.toolchain.devices import NO_DEVICE
from neffbench.toolchain.flavour import flavour_reason
from neffbench.toolchain.stack import Stack, detect

if TYPE_CHECKING:
    from neffbench.toolchain.facts import Facts


def choose_backend(requested: str, facts: Facts) -> tuple[str, str]:
    """Which backend a compile uses and one line saying why."""
    if requested == "cpu-check":
        return "cpu-check", "cpu-check requested: torch.jit.trace on CPU only, no NEFF is made"
    if requested == "neuron":
        return "neuron", "neuron requested"
    if requested == "torchneuron":
        return "torchneuron", "torchneuron requested"
    version = facts.torch_neuronx.version
    if facts.neuron_toolchain:
        flavour = facts.torch_neuronx_flavour
        if flavour == "native":
            return "torchneuron", (
                f"torch_neuronx {version} imports and neuronx-cc is on PATH; it is TorchNeuron "
                f"({flavour_reason(version, flavour)})"
            )
        why = f"; it is the legacy XLA flavour ({flavour_reason(version, flavour)})" if flavour == "legacy" else ""
        return "neuron", f"torch_neuronx {version} imports and neuronx-cc is on PATH{why}"
    missing = [c.name for c in (facts.torch_neuronx, facts.neuronx_cc) if not c.found]
    return "cpu-check", (
        f"{' and '.join(missing)} not available, so compiles run the CPU check (torch.jit.trace) and make no NEFF"
    )


def choose_stack(facts: Facts) -> Stack:
    """Which stack ``facts`` describe (the legacy Neuron venv or not) and its known bad combinations."""
    return detect(choose_backend("auto", facts)[0], facts.torch_neuronx_flavour)


def use_cpu_backend(setting: str, facts: Facts) -> tuple[bool, str]:
    """Whether torch_neuronx.trace gets cpu_backend=True, and why."""
    if setting == "on":
        return True, "cpu_backend on in the spec"
    if setting == "off":
        return False, "cpu_backend off in the spec"
    if facts.devices:
        return False, f"Neuron device present ({facts.devices[0]})"
    return True, NO_DEVICE
