"""The two ways a host is known to the runtimes: by importing their packages (the run child, as it starts) or
from what ``neffbench doctor`` found (the window and doctor, which import nothing)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from neffbench.runs.runtimes.base import Package
from neffbench.toolchain.devices import neuron_devices

if TYPE_CHECKING:
    from neffbench.toolchain.facts import Facts


class ImportingHost:
    """This host as the run child sees it: a package is there when it imports (placeholder packages raise
    ImportError, broken ones anything); the torch_neuronx flavour is not asked (the target says what it has)."""

    flavour: str | None = None

    def __init__(self) -> None:
        self.devices = neuron_devices()
        self._found: dict[str, Package] = {}

    def package(self, name: str) -> Package:
        if name not in self._found:
            self._found[name] = _imports(name)
        return self._found[name]


def _imports(name: str) -> Package:
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - placeholder packages raise ImportError, broken ones anything
        first = str(exc).splitlines()[0] if str(exc) else ""
        return Package(False, f"{name} does not import ({type(exc).__name__}: {first})")
    return Package(True, f"{name} {getattr(module, '__version__', '')}".strip() + " imports")


class FactsHost:
    """This host as doctor found it (``toolchain.facts.Facts``): a package is there when it is installed."""

    def __init__(self, facts: Facts):
        self.devices = list(facts.devices)
        self.flavour = facts.torch_neuronx_flavour
        self._components = {c.name: c for c in (*facts.runtimes, facts.torch_neuronx)}

    def package(self, name: str) -> Package:
        component = self._components.get(name)
        if component is None or not component.found:
            detail = component.detail if component is not None else ""
            return Package(False, f"{name} is {detail or 'not installed'}")
        return Package(True, f"{name} {component.version or ''}".rstrip() + " is installed")
