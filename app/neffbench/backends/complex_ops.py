"""Complex numbers inside the graph: which operations make or take complex tensors, where in the user's code, and
what the installed toolchain does with them (torch; worker and probe only).

Complex inputs and outputs are caught by the input and output checks; this finds the ones in between
(``view_as_complex``, ``polar``, complex products), by watching one eager run through a TorchFunctionMode.
neuronx-cc before the SDK 2.32 release (2.27) rejects complex types (NCC_EVRF004); from 2.27 it supports
complex64 for a documented list of about 30 operations; TorchNeuron on torch 2.13+ decomposes complex
operations itself unless ``TORCH_NEURONX_COMPLEX_DECOMPOSE`` is off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from neffbench.usercode.effects import op_name
from neffbench.usercode.origin import user_line

# The compiler's own operation names for what it supports in complex64 (release notes of SDK 2.32), and the
# torch calls that lower to them.
_SUPPORTED = {
    "add": "add",
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add",
    "sub": "subtract",
    "subtract": "subtract",
    "__sub__": "subtract",
    "__rsub__": "subtract",
    "rsub": "subtract",
    "mul": "multiply",
    "multiply": "multiply",
    "__mul__": "multiply",
    "__rmul__": "multiply",
    "__imul__": "multiply",
    "div": "divide",
    "divide": "divide",
    "true_divide": "divide",
    "__truediv__": "divide",
    "__rtruediv__": "divide",
    "eq": "compare",
    "ne": "compare",
    "__eq__": "compare",
    "__ne__": "compare",
    "abs": "abs",
    "exp": "exp",
    "sin": "sin",
    "cos": "cos",
    "log": "log",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "tanh": "tanh",
    "neg": "negate",
    "negative": "negate",
    "__neg__": "negate",
    "pow": "power",
    "__pow__": "power",
    "reshape": "reshape",
    "view": "reshape",
    "flatten": "reshape",
    "unsqueeze": "reshape",
    "squeeze": "reshape",
    "view_as_complex": "complex",
    "complex": "complex",
    "polar": "complex",
    "real": "real",
    "imag": "imag",
    "view_as_real": "real/imag",
    "matmul": "dot_general",
    "__matmul__": "dot_general",
    "mm": "dot",
    "bmm": "dot_general",
    "einsum": "dot_general",
    "expand": "broadcast_in_dim",
    "expand_as": "broadcast_in_dim",
    "broadcast_to": "broadcast_in_dim",
    "where": "select",
    "transpose": "transpose",
    "permute": "transpose",
    "t": "transpose",
    "__getitem__": "slice",
    "narrow": "slice",
    "chunk": "slice",
    "split": "slice",
    "cat": "concatenate",
    "concat": "concatenate",
    "concatenate": "concatenate",
    "stack": "concatenate",
    "pad": "pad",
    "arange": "iota",
}
# Calls that move no value: never worth a sentence.
_BOOKKEEPING = {
    "size",
    "dim",
    "shape",
    "numel",
    "dtype",
    "device",
    "is_complex",
    "contiguous",
    "clone",
    "detach",
    "to",
    "type_as",
    "__len__",
    "__repr__",
    "__format__",
    "__bool__",
    "is_floating_point",
    "element_size",
    "requires_grad",
    "data",
    "__get__",
    "__setitem__",
    "storage_offset",
    "stride",
    "is_contiguous",
}
_COMPUTED_ATTRIBUTES = {"real", "imag", "T", "mT", "H", "mH"}
FIRST_SUPPORTING = (2, 27)  # neuronx-cc of the SDK 2.32 release


@dataclass(frozen=True)
class Finding:
    op: str  # torch.view_as_complex, Tensor.mul
    where: str  # model.py:41, or "" when no frame is the user's
    supported_as: str | None  # the compiler's operation it lowers to, when that is on the documented list


def _is_complex(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_complex()
    if isinstance(value, (list, tuple)):
        return any(_is_complex(v) for v in value)
    return False


class _Watch(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict[tuple[str, str], Finding] = {}

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        # Only calls that touch a complex value are named: naming every call (torch's name table is built on the
        # first) would cost more than most of the calls.
        if not (_is_complex(out) or _is_complex(args) or _is_complex(list(kwargs.values()))):
            return out
        name = op_name(func)
        last = name.rsplit(".", 1)[-1]
        # Reading an attribute (x.ndim, x.shape) computes nothing; x.real, x.imag and the transposes do.
        attribute = getattr(func, "__name__", "") == "__get__" or name.endswith(".__get__")
        if attribute and last not in _COMPUTED_ATTRIBUTES:
            return out
        if last not in _BOOKKEEPING:
            where = user_line()
            if (name, where) not in self.found:
                self.found[(name, where)] = Finding(name, where, _SUPPORTED.get(last))
        return out


def watch_call(module: Any, inputs: tuple[Any, ...]) -> tuple[Any, list[Finding]]:
    """Call ``module(*inputs)`` (no grad), returning its output and the complex operations it ran."""
    mode = _Watch()
    with torch.no_grad(), mode:
        out = module(*inputs)
    return out, list(mode.found.values())


def _version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts = []
    for piece in text.split("+")[0].split(".")[:2]:
        if not piece.isdigit():
            return None
        parts.append(int(piece))
    return tuple(parts)


def _listed(findings: list[Finding]) -> str:
    return "; ".join(f"{f.op}{f' at {f.where}' if f.where else ''}" for f in findings[:8]) + (
        f"; and {len(findings) - 8} more" if len(findings) > 8 else ""
    )


_REMEDY = (
    "keep the real and imaginary parts as separate float tensors (for a rotary embedding, cos and sin tables: "
    "x*cos - y*sin and x*sin + y*cos), so the graph has no complex value"
)


def advice(findings: list[Finding], backend: Any, neuronx_cc: str | None, torch_version: str) -> list[tuple[str, str]]:
    """(severity, sentence) for pre-flight: what the toolchain that compiles this job does with these operations
    (``backend``: its class; each says what it does with them: Backend.complex_advice)."""
    if not findings:
        return []
    ops = _listed(findings)
    outside = [f for f in findings if f.supported_as is None]
    own = backend.complex_advice(ops, outside, neuronx_cc, torch_version)
    if own is not None:
        return own
    # cpu-check, or the toolchain's version unknown: what each Neuron compile would do.
    beyond = f" ({_listed(outside)} are outside that list)" if outside else ""
    return [
        (
            "warning",
            f"the graph computes with complex numbers ({ops}): a Neuron compile with neuronx-cc before "
            "2.27 (SDK 2.32) rejects complex types (NCC_EVRF004), later ones support complex64 for about "
            f"30 operations{beyond}, and TorchNeuron decomposes them itself; to compile anywhere, "
            f"{_REMEDY}",
        )
    ]


def torchneuron_advice(ops: str, torch_version: str) -> list[tuple[str, str]]:
    """TorchNeuron decomposes complex operations itself (on torch 2.13+, unless told not to)."""
    decompose = os.environ.get("TORCH_NEURONX_COMPLEX_DECOMPOSE", "1").lower() not in ("0", "false", "off")
    if decompose and (_version(torch_version) or (0,)) >= (2, 13):
        return [
            (
                "warning",
                f"the graph computes with complex numbers ({ops}); TorchNeuron decomposes complex "
                "operations into real ones itself (TORCH_NEURONX_COMPLEX_DECOMPOSE is on), so they "
                "compile, as real arithmetic",
            )
        ]
    return [
        (
            "error",
            f"the graph computes with complex numbers ({ops}) and TorchNeuron's complex decomposition "
            f"is off (TORCH_NEURONX_COMPLEX_DECOMPOSE), so neuronx-cc gets complex types: {_REMEDY}",
        )
    ]


def legacy_advice(ops: str, outside: list[Finding], neuronx_cc: str | None) -> list[tuple[str, str]] | None:
    """torch_neuronx.trace hands complex types to neuronx-cc: what its version does with them (None: unknown)."""
    version = _version(neuronx_cc)
    if version is None:
        return None
    if version < FIRST_SUPPORTING:
        return [
            (
                "error",
                f"the graph computes with complex numbers ({ops}), and neuronx-cc {neuronx_cc} (before the "
                f"SDK 2.32 release) rejects complex types with NCC_EVRF004: {_REMEDY}",
            )
        ]
    if not outside:
        return [
            (
                "warning",
                f"the graph computes with complex64 ({ops}); neuronx-cc {neuronx_cc} supports these "
                "operations in complex64 (SDK 2.32 and later)",
            )
        ]
    return [
        (
            "warning",
            f"the graph computes with complex numbers; neuronx-cc {neuronx_cc} supports complex64 "
            f"for about 30 operations, and these are not among them: {_listed(outside)}; where it "
            f"fails, {_REMEDY}",
        )
    ]
