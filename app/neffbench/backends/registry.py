"""The backends by name: an explicit table, as a compiler explorer lists its compilers, not a search."""

from __future__ import annotations

from neffbench.backends.base import Backend
from neffbench.backends.cpu_check import CpuCheck
from neffbench.backends.legacy import LegacyTrace
from neffbench.backends.torchneuron import TorchNeuron

AUTO = "auto"
AUTO_LABEL = "auto (torchneuron or neuron, whichever torch_neuronx is installed, else cpu-check)"
REGISTRY: dict[str, type[Backend]] = {cls.name: cls for cls in (LegacyTrace, TorchNeuron, CpuCheck)}
# What --backend accepts: "auto" lets the worker choose (toolchain.choose).
CHOICES = (AUTO, *REGISTRY)
# The backends that run neuronx-cc and so make NEFFs.
NEFF_BACKENDS = tuple(name for name, cls in REGISTRY.items() if cls.makes_neff)


class UnknownBackend(KeyError):
    """A backend name no class answers to; the message names the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def get(name: str) -> type[Backend]:
    """The class of backend ``name``, or UnknownBackend naming the known ones."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownBackend(f"unknown backend {name!r}; known backends: {', '.join(REGISTRY)}") from None


def recorded(name: object) -> type[Backend] | None:
    """The class of a backend as a job record names it; None for a record that names none (or one unknown)."""
    return REGISTRY.get(name) if isinstance(name, str) else None


def makes_no_neff(name: object) -> bool:
    """Whether a recorded backend makes no NEFF by design (cpu-check): its missing NEFF is no failure's sign."""
    cls = recorded(name)
    return cls is not None and not cls.makes_neff


def neff_in_model_pt(name: object) -> bool:
    """Whether a recorded backend's model.pt is a TorchScript holding the NEFF (torch_neuronx can load it)."""
    cls = recorded(name)
    return cls is not None and cls.makes_neff and cls.keeps_model_pt


def label(name: str) -> str:
    """How ``name`` (or ``auto``) reads where a user sees it."""
    return AUTO_LABEL if name == AUTO else get(name).label


# How each choice reads where a user sees it (CLI help, doctor, the status bar).
LABELS = {name: label(name) for name in CHOICES}
