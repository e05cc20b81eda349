"""How a job compiles, decided and started inside the worker: ``neuron`` (torch_neuronx.trace, the legacy
XLA flavour), ``torchneuron`` (torch.compile(backend="neuron"), TorchNeuron; see jobs/torchneuron.py) and
``cpu-check`` (torch.jit.trace)."""

from __future__ import annotations

import importlib
import os
import platform
import re
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from neffbench.doctor import (
    FLAVOUR_LABELS, Component, Facts, choose_backend, dist_version, flavour_reason, neuron_devices,
    neuronx_flavour, neuronx_import_failure, use_cpu_backend,
)
from neffbench.jobs.protocol import BACKENDS, NEFF_BACKENDS

PLATFORM_ENV = "NEURON_PLATFORM_TARGET_OVERRIDE"
_FAILED_WITH_RE = re.compile(r"neuronx-cc failed with (-?\d+)")


class JobFailure(Exception):
    """A failure with a one-line reason for the record (the traceback goes to the log)."""


@dataclass
class Backend:
    name: str  # "neuron", "torchneuron" or "cpu-check"
    reason: str
    cpu_backend: bool | None = None
    cpu_backend_reason: str | None = None
    torch_neuronx: ModuleType | None = None
    neuronx_cc: str | None = None  # path
    flavour: str | None = None  # of the torch_neuronx imported: "native" or "legacy"

    @property
    def makes_neff(self) -> bool:
        return self.name in NEFF_BACKENDS


def _not_probed(name: str) -> Component:
    return Component(name, False, detail="not probed by the worker")


def _facts(torch_neuronx: Component, neuronx_cc: Component, devices: list[str], flavour: str | None = None) -> Facts:
    """Just enough of the doctor's facts for choose_backend and use_cpu_backend."""
    return Facts(python=Component("python", True, platform.python_version()), torch=_not_probed("torch"),
                 pyside6=_not_probed("PySide6"), pyqtgraph=_not_probed("pyqtgraph"), torch_neuronx=torch_neuronx,
                 neuronx_cc=neuronx_cc, devices=devices, torch_neuronx_flavour=flavour)


def _import_torch_neuronx() -> tuple[ModuleType | None, Component]:
    try:
        module = importlib.import_module("torch_neuronx")
    except Exception as exc:  # noqa: BLE001 - the PyPI placeholder raises ImportError, broken installs anything
        first = neuronx_import_failure(str(exc).splitlines()[0] if str(exc) else "")
        detail = "not installed" if isinstance(exc, ModuleNotFoundError) and exc.name == "torch_neuronx" else (
            f"does not import: {type(exc).__name__}: {first}")
        return None, Component("torch_neuronx", False, detail=detail)
    return module, Component("torch_neuronx", True, getattr(module, "__version__", "unknown"), "imports")


def resolve(requested: str, spec: Any) -> Backend:
    """Pick the backend; with neuron possible, decide cpu_backend first so the platform override precedes the import."""
    if requested not in BACKENDS:
        raise JobFailure(f"unknown backend {requested!r}; expected one of {', '.join(BACKENDS)}")
    if requested == "cpu-check":
        name, reason = choose_backend("cpu-check", _facts(_not_probed("torch_neuronx"), _not_probed("neuronx-cc"), []))
        return Backend(name, reason)
    devices = neuron_devices()
    cpu, cpu_reason = use_cpu_backend(spec.compiler.cpu_backend, _facts(_not_probed("torch_neuronx"),
                                                                        _not_probed("neuronx-cc"), devices))
    # TorchNeuron has no cpu_backend, and its target comes from the instance: when the installed
    # distribution says it is TorchNeuron, the override must not be set for it.
    if requested == "torchneuron" or neuronx_flavour(dist_version("torch-neuronx")) == "native":
        cpu = False
    previous = os.environ.get(PLATFORM_ENV)
    if cpu:
        os.environ[PLATFORM_ENV] = spec.compiler.target
    module, tnx = _import_torch_neuronx()
    flavour = neuronx_flavour(tnx.version, hasattr(module, "trace")) if module is not None else None
    cc_path = shutil.which("neuronx-cc")
    cc = Component("neuronx-cc", cc_path is not None, dist_version("neuronx-cc"), cc_path or "not on PATH")
    facts = _facts(tnx, cc, devices, flavour)
    if requested in NEFF_BACKENDS and not facts.neuron_toolchain:
        problems = [f"{c.name}: {c.detail}" for c in (tnx, cc) if not c.found]
        raise JobFailure(f"the {requested} backend was requested but {'; '.join(problems)}")
    _check_flavour(requested, tnx.version, flavour)
    name, reason = choose_backend(requested, facts)
    if name != "neuron":
        if cpu:  # the override was only for torch_neuronx.trace, which will not be used
            _restore_env(previous)
        if name == "torchneuron":
            if requested == "torchneuron":
                reason += f"; torch_neuronx {tnx.version} is TorchNeuron ({flavour_reason(tnx.version, flavour)})"
            return Backend(name, reason, None, None, module, cc_path, flavour)
        return Backend(name, reason)
    if cpu and previous and previous != spec.compiler.target:
        reason += f"; {PLATFORM_ENV} was {previous}, set to the spec's target {spec.compiler.target}"
    return Backend(name, reason, cpu, cpu_reason, module, cc_path, flavour)


def _check_flavour(requested: str, version: str | None, flavour: str | None) -> None:
    """A backend asked for by name needs its flavour of torch_neuronx: say which one is installed instead."""
    if requested == "neuron" and flavour == "native":
        raise JobFailure(f"the neuron backend (torch_neuronx.trace, legacy, SDK ≤ 2.31) was requested but "
                         f"torch_neuronx {version} is {FLAVOUR_LABELS['native']} ({flavour_reason(version, flavour)}), "
                         "which has no torch_neuronx.trace: use --backend torchneuron")
    if requested == "torchneuron" and flavour == "legacy":
        raise JobFailure(f"the torchneuron backend was requested but torch_neuronx {version} is "
                         f"{FLAVOUR_LABELS['legacy']} ({flavour_reason(version, flavour)}): use --backend neuron, or "
                         "install torch-neuronx 2.13.3 or later (Neuron SDK 2.33+) on a Trn2/Trn3 instance")


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


def _quiet_jit_deprecation() -> None:
    # torch >= 2.10 marks torch.jit.trace/save deprecated; torch_neuronx.trace is built on them, so
    # the warning says nothing actionable about this job.
    warnings.filterwarnings("ignore", message=r"`torch\.jit\..*is deprecated", category=DeprecationWarning)


def source_location(filename: str, lineno: int) -> str:
    """``problems.py:113`` for a user's file; ``transformers/masking_utils.py:229`` inside a package."""
    parts = Path(filename).parts
    if "site-packages" in parts:
        return f"{'/'.join(parts[parts.index('site-packages') + 1:])}:{lineno}"
    return f"{filename}:{lineno}"


def _torch_internal(filename: str) -> bool:
    # Warnings raised inside torch itself (printing a tensor while tracing, for one) say nothing
    # about the user's module.
    import torch

    return str(Path(filename).resolve()).startswith(str(Path(torch.__file__).resolve().parent))


def _explain_trace_failure(exc: RuntimeError) -> None:
    """A trace failure that has a known cause becomes a JobFailure saying it (and what to do)."""
    import traceback

    from neffbench.kernels.module.hf_compat import explain_trace_failure

    sentence = explain_trace_failure("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    if sentence:
        raise JobFailure(sentence) from exc


def cpu_check_trace(module: Any, inputs: tuple[Any, ...]) -> tuple[Any, list[str]]:
    """torch.jit.trace as torch_neuronx.trace's last step runs it (strict=False); returns the tracer's
    warnings too, each once, with the file and line that raised it."""
    import torch

    _quiet_jit_deprecation()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", torch.jit.TracerWarning)
        try:
            traced = torch.jit.trace(module, inputs, strict=False, check_trace=False)
        except RuntimeError as exc:
            _explain_trace_failure(exc)
            raise
    messages: list[str] = []
    for w in caught:
        if issubclass(w.category, torch.jit.TracerWarning):
            if _torch_internal(w.filename):
                continue
            first = str(w.message).strip().splitlines()[0] if str(w.message).strip() else ""
            text = f"TracerWarning at {source_location(w.filename, w.lineno)}: {first}"
            if text not in messages:
                messages.append(text)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return traced, messages


def neuron_trace(backend: Backend, module: Any, inputs: tuple[Any, ...], compiler_dir: Path,
                 args: list[str]) -> Any:
    """torch_neuronx.trace into the job's compiler workdir; a compiler failure becomes a JobFailure with its exit code."""
    _quiet_jit_deprecation()
    if not shutil.which("neuronx-cc"):
        raise JobFailure("neuronx-cc is not on PATH")
    kwargs: dict[str, Any] = {"compiler_workdir": str(compiler_dir), "compiler_args": list(args)}
    if backend.cpu_backend:
        kwargs["cpu_backend"] = True
    try:
        return backend.torch_neuronx.trace(module, inputs, **kwargs)
    except RuntimeError as exc:
        m = _FAILED_WITH_RE.search(str(exc))
        if not m:
            _explain_trace_failure(exc)
            raise
        from neffbench.compilerlog.exits import meaning as explain_exit_code

        code = int(m.group(1))
        raise JobFailure(f"neuronx-cc failed with {code}: {explain_exit_code(code)}") from exc
