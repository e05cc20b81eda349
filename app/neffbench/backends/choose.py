"""Which backend a job compiles with, decided inside the worker: the toolchain's choice (toolchain.choose) made
into an instance of its class, with the torch_neuronx module imported and the environment set for it."""

from __future__ import annotations

import importlib
import os
import platform
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

from neffbench.backends import registry
from neffbench.backends.base import Backend, JobFailure
from neffbench.backends.torchneuron_compile import restore, set_isolation
from neffbench.toolchain.choose import choose_backend, use_cpu_backend
from neffbench.toolchain.devices import neuron_devices
from neffbench.toolchain.facts import Component, Facts, dist_version
from neffbench.toolchain.flavour import FLAVOUR_LABELS, flavour_reason, neuronx_flavour, neuronx_import_failure

PLATFORM_ENV = "NEURON_PLATFORM_TARGET_OVERRIDE"


def _not_probed(name: str) -> Component:
    return Component(name, False, detail="not probed by the worker")


def _facts(torch_neuronx: Component, neuronx_cc: Component, devices: list[str], flavour: str | None = None) -> Facts:
    """Just enough of the toolchain's facts for choose_backend and use_cpu_backend."""
    return Facts(
        python=Component("python", True, platform.python_version()),
        torch=_not_probed("torch"),
        pyside6=_not_probed("PySide6"),
        pyqtgraph=_not_probed("pyqtgraph"),
        torch_neuronx=torch_neuronx,
        neuronx_cc=neuronx_cc,
        devices=devices,
        torch_neuronx_flavour=flavour,
    )


def _import_torch_neuronx() -> tuple[ModuleType | None, Component]:
    try:
        module = importlib.import_module("torch_neuronx")
    except Exception as exc:  # noqa: BLE001 - the PyPI placeholder raises ImportError, broken installs anything
        first = neuronx_import_failure(str(exc).splitlines()[0] if str(exc) else "")
        detail = (
            "not installed"
            if isinstance(exc, ModuleNotFoundError) and exc.name == "torch_neuronx"
            else (f"does not import: {type(exc).__name__}: {first}")
        )
        return None, Component("torch_neuronx", False, detail=detail)
    return module, Component("torch_neuronx", True, getattr(module, "__version__", "unknown"), "imports")


def resolve_in(job_dir: Path, requested: str, spec: Any) -> Backend:
    """:func:`resolve` for a job: a request that may end with TorchNeuron points its caches and log into the job
    first (TorchNeuron reads where they go only once, when torch_neuronx is imported), and takes them back
    when another backend was chosen."""
    cls = None if requested == registry.AUTO else registry.get(requested)
    isolation = set_isolation(job_dir) if cls is None or cls.isolates_environment else None
    backend = resolve(requested, spec)
    if isolation is not None and not backend.isolates_environment:
        restore(isolation)
    return backend


def resolve(requested: str, spec: Any) -> Backend:
    """Pick the backend; with neuron possible, decide cpu_backend first so the platform override precedes the import."""
    if requested not in registry.CHOICES:
        raise JobFailure(f"unknown backend {requested!r}; expected one of {', '.join(registry.CHOICES)}")
    wanted = None if requested == registry.AUTO else registry.get(requested)
    if wanted is not None and not wanted.makes_neff:
        name, reason = choose_backend(requested, _facts(_not_probed("torch_neuronx"), _not_probed("neuronx-cc"), []))
        return registry.get(name)(reason)
    devices = neuron_devices()
    cpu, cpu_reason = use_cpu_backend(
        spec.compiler.cpu_backend, _facts(_not_probed("torch_neuronx"), _not_probed("neuronx-cc"), devices)
    )
    # TorchNeuron has no cpu_backend, and its target comes from the instance: when the installed
    # distribution says it is TorchNeuron, the override must not be set for it.
    if (wanted is not None and wanted.flavour_needed == "native") or (
        neuronx_flavour(dist_version("torch-neuronx")) == "native"
    ):
        cpu = False
    previous = os.environ.get(PLATFORM_ENV)
    if cpu:
        os.environ[PLATFORM_ENV] = spec.compiler.target
    module, tnx = _import_torch_neuronx()
    flavour = neuronx_flavour(tnx.version, hasattr(module, "trace")) if module is not None else None
    cc_path = shutil.which("neuronx-cc")
    cc = Component("neuronx-cc", cc_path is not None, dist_version("neuronx-cc"), cc_path or "not on PATH")
    facts = _facts(tnx, cc, devices, flavour)
    if wanted is not None and not facts.neuron_toolchain:
        problems = [f"{c.name}: {c.detail}" for c in (tnx, cc) if not c.found]
        raise JobFailure(f"the {requested} backend was requested but {'; '.join(problems)}")
    if wanted is not None:
        _check_flavour(wanted, tnx.version, flavour)
    name, reason = choose_backend(requested, facts)
    chosen = registry.get(name)
    if not chosen.uses_cpu_backend:
        if cpu:  # the override was only for torch_neuronx.trace, which will not be used
            _restore_env(previous)
        if not chosen.makes_neff:
            return chosen(reason)
        if wanted is chosen:
            reason += f"; torch_neuronx {tnx.version} is TorchNeuron ({flavour_reason(tnx.version, flavour)})"
        return chosen(reason, torch_neuronx=module, neuronx_cc=cc_path, flavour=flavour)
    if cpu and previous and previous != spec.compiler.target:
        reason += f"; {PLATFORM_ENV} was {previous}, set to the spec's target {spec.compiler.target}"
    return chosen(
        reason,
        cpu_backend=cpu,
        cpu_backend_reason=cpu_reason,
        torch_neuronx=module,
        neuronx_cc=cc_path,
        flavour=flavour,
    )


def _check_flavour(wanted: type[Backend], version: str | None, flavour: str | None) -> None:
    """A backend asked for by name needs its flavour of torch_neuronx: say which one is installed instead."""
    if wanted.flavour_needed is None or flavour is None or flavour == wanted.flavour_needed:
        return
    raise JobFailure(wanted.wrong_flavour(version, f"{FLAVOUR_LABELS[flavour]} ({flavour_reason(version, flavour)})"))


def _restore_env(previous: str | None) -> None:
    if previous is None:
        os.environ.pop(PLATFORM_ENV, None)
    else:
        os.environ[PLATFORM_ENV] = previous


def versions(backend: Backend) -> dict[str, Any]:
    from neffbench.versions import torch_neuronx_version, torch_version

    return {
        "python": platform.python_version(),
        "torch": torch_version(),
        "torch_neuronx": torch_neuronx_version() if backend.torch_neuronx else None,
        "neuronx_cc": dist_version("neuronx-cc") if backend.makes_neff else None,
        "torch_neuronx_flavour": backend.flavour,
    }
