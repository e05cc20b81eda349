"""The traces: torch.jit.trace as the cpu-check backend (and the probe before a Neuron compile) runs it, and
torch_neuronx.trace into the job's compiler workdir; a failure with a known cause becomes a JobFailure saying it."""

from __future__ import annotations

import re
import shutil
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.backends.base import JobFailure
from neffbench.usercode.origin import is_user_file

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


# What each kind of TracerWarning fixed at trace time, in the user's words (by the start of torch's message).
_FIXED = (
    (
        "Converting a tensor to a Python boolean",
        "this Python bool was fixed at trace time: the graph holds only the branch the example inputs took",
    ),
    ("Converting a tensor to a Python", "this value was fixed at trace time: the graph holds the example's value"),
    ("Converting a tensor to a NumPy", "this value was fixed at trace time: the graph holds the example's value"),
    ("Iterating over a tensor", "the number of iterations was fixed at trace time"),
    ("torch.tensor results are registered as constants", "this tensor is a constant of the graph"),
)


@dataclass
class TracerWarnings:
    """The tracer's warnings, sorted: those raised in the user's own files first, each once with the line and what
    was fixed; those raised inside libraries (their own shape checks: a transformers model prints a few) counted
    by place, not repeated."""

    own: dict[str, str] = field(default_factory=dict)  # model.py:113: the sentence
    libraries: Counter[str] = field(default_factory=Counter)  # transformers/masking_utils.py:229: how many

    def add(self, filename: str, lineno: int, text: str) -> None:
        first = text.strip().splitlines()[0] if text.strip() else ""
        if filename.startswith("<") or not is_user_file(filename):
            self.libraries[source_location(filename, lineno)] += 1
            return
        where = f"{Path(filename).name}:{lineno}"
        fixed = next((what for start, what in _FIXED if first.startswith(start)), "")
        self.own.setdefault(where, f"TracerWarning at {where}: {first}" + (f" ({fixed})" if fixed else ""))

    @property
    def first_own(self) -> str | None:
        """Where the first warning raised in the user's own code was (``model.py:113``)."""
        return next(iter(self.own), None)

    def messages(self) -> list[str]:
        out = list(self.own.values())
        if self.libraries:
            places = ", ".join(f"{where}{f' x{n}' if n > 1 else ''}" for where, n in self.libraries.most_common(4))
            more = len(self.libraries) - 4
            out.append(
                f"{sum(self.libraries.values())} TracerWarnings came from inside libraries ({places}"
                f"{f' and {more} more places' if more > 0 else ''}): their own checks, most often of shapes, which a "
                "trace fixes anyway; the check of the trace on other inputs tells whether one of them mattered."
            )
        return out

    def report(self, report: Any) -> None:
        """Into a pre-flight report: the user's own as warnings, the libraries' count as a note."""
        for message in self.own.values():
            report.warning(message)
        if self.libraries:
            report.note(self.messages()[-1])


def cpu_check_trace(module: Any, inputs: tuple[Any, ...]) -> tuple[Any, TracerWarnings]:
    """torch.jit.trace as torch_neuronx.trace's last step runs it (strict=False); returns the tracer's
    warnings too, sorted (TracerWarnings)."""
    import torch

    _quiet_jit_deprecation()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", torch.jit.TracerWarning)
        try:
            traced = torch.jit.trace(module, inputs, strict=False, check_trace=False)
        except RuntimeError as exc:
            _explain_trace_failure(exc)
            raise
    found = TracerWarnings()
    for w in caught:
        if issubclass(w.category, torch.jit.TracerWarning):
            if not _torch_internal(w.filename):
                found.add(w.filename, w.lineno, str(w.message))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return traced, found


def neuron_trace(
    backend: Any,
    module: Any,
    inputs: tuple[Any, ...],
    compiler_dir: Path,
    args: list[str],
    aliases: dict[Any, int] | None = None,
) -> Any:
    """torch_neuronx.trace into the job's compiler workdir (``aliases``: its input_output_aliases, the state kept on
    the device); a compiler failure becomes a JobFailure with its exit code."""
    _quiet_jit_deprecation()
    if not shutil.which("neuronx-cc"):
        raise JobFailure("neuronx-cc is not on PATH")
    kwargs: dict[str, Any] = {"compiler_workdir": str(compiler_dir), "compiler_args": list(args)}
    if aliases:
        kwargs["input_output_aliases"] = aliases
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
