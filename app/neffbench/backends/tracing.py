"""The traces: torch.jit.trace as the cpu-check backend (and the probe before a Neuron compile) runs it, and
torch_neuronx.trace into the job's compiler workdir; a failure with a known cause becomes a JobFailure saying it."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path
from typing import Any

from neffbench.backends.base import JobFailure

_FAILED_WITH_RE = re.compile(r"neuronx-cc failed with (-?\d+)")


def _quiet_jit_deprecation() -> None:
    # torch >= 2.10 marks torch.jit.trace/save deprecated; torch_neuronx.trace is built on them, so
    # the warning says nothing actionable about this job.
    warnings.filterwarnings("ignore", message=r"`torch\.jit\..*is deprecated", category=DeprecationWarning)


def source_location(filename: str, lineno: int) -> str:
    """``problems.py:113`` for a user's file; ``transformers/masking_utils.py:229`` inside a package."""
    parts = Path(filename).parts
    if "site-packages" in parts:
        return f"{'/'.join(parts[parts.index('site-packages') + 1 :])}:{lineno}"
    return f"{filename}:{lineno}"


def _torch_internal(filename: str) -> bool:
    # Warnings raised inside torch itself (printing a tensor while tracing, for one) say nothing
    # about the user's module.
    import torch

    return str(Path(filename).resolve()).startswith(str(Path(torch.__file__).resolve().parent))


def _explain_trace_failure(exc: RuntimeError) -> None:
    """A trace failure that has a known cause becomes a JobFailure saying it (and what to do)."""
    import traceback

    from neffbench.kernels import registry

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    for kernel in registry.available():
        sentence = kernel.explain_trace_failure(text)
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


def neuron_trace(backend: Any, module: Any, inputs: tuple[Any, ...], compiler_dir: Path, args: list[str]) -> Any:
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
