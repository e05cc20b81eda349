"""Traced-versus-eager numerics: max absolute and relative error and a per-dtype tolerance verdict.

Runs inside the worker (it needs torch).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from neffbench.kernels.build import TOLERANCES, example_inputs
from neffbench.spec import CompileSpec

# --auto-cast moves FP32 arithmetic to another type, so the error to expect is that type's.
_AUTO_CAST_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}
_AUTO_CAST_TOLERANCES = {"tf32": (1e-3, 1e-3), "fp8_e4m3": (0.25, 0.125)}


def tolerance_for(spec: CompileSpec) -> tuple[float, float, str]:
    """(atol, rtol, what they were chosen for)."""
    dtype = spec.inputs.dtype
    c = spec.compiler
    if c.auto_cast != "none" and dtype == "float32":
        basis = f"float32 auto-cast to {c.auto_cast_type}"
        if c.auto_cast_type in _AUTO_CAST_DTYPES:
            return (*TOLERANCES[_AUTO_CAST_DTYPES[c.auto_cast_type]], basis)
        return (*_AUTO_CAST_TOLERANCES[c.auto_cast_type], basis)
    atol, rtol = TOLERANCES[dtype]
    return atol, rtol, dtype


def as_tuple(out: Any) -> tuple[torch.Tensor, ...]:
    if isinstance(out, torch.Tensor):
        return (out,)
    return tuple(out)


def compare(actual: Any, expected: Any, atol: float, rtol: float) -> dict[str, Any]:
    """Element-wise comparison in float32; ``match`` is torch.allclose's |a-b| <= atol + rtol*|b|.

    The relative error is taken over elements with |b| > atol only: near zero it says nothing.
    """
    got, want = as_tuple(actual), as_tuple(expected)
    outputs = []
    for i in range(max(len(got), len(want))):
        entry: dict[str, Any] = {"name": f"output{i}"}
        if i >= len(got) or i >= len(want):
            entry.update(match=False, problem=f"{'traced' if i >= len(got) else 'eager'} result has no output{i}")
            outputs.append(entry)
            continue
        a, b = got[i], want[i]
        entry.update(shape=list(b.shape), dtype=str(b.dtype).replace("torch.", ""))
        if a.shape != b.shape:
            entry.update(match=False, problem=f"shape {list(a.shape)} instead of {list(b.shape)}")
            outputs.append(entry)
            continue
        a32, b32 = a.detach().float(), b.detach().float()
        diff = (a32 - b32).abs()
        big = b32.abs() > atol
        entry["max_abs_error"] = float(diff.max()) if diff.numel() else 0.0
        entry["max_rel_error"] = float((diff[big] / b32.abs()[big]).max()) if bool(big.any()) else 0.0
        entry["match"] = bool(torch.allclose(a32, b32, atol=atol, rtol=rtol, equal_nan=True))
        outputs.append(entry)
    return {
        "max_abs_error": max((o.get("max_abs_error", float("inf")) for o in outputs), default=0.0),
        "max_rel_error": max((o.get("max_rel_error", float("inf")) for o in outputs), default=0.0),
        "match": all(o["match"] for o in outputs),
        "outputs": outputs,
    }


def fresh_inputs(spec: CompileSpec) -> tuple[torch.Tensor, ...]:
    """Other values of the same shapes: a trace that baked an input's values in fails on these."""
    other = dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, seed=spec.inputs.seed + 1))
    return example_inputs(other, spec.inputs.num_tokens[0])


def verify(traced: Any, module: Any, spec: CompileSpec, inputs: tuple[torch.Tensor, ...],
           reference: Any, *, where: str, on_device: bool) -> dict[str, Any]:
    """Run ``traced`` on the example inputs and on fresh ones, against the eager module."""
    atol, rtol, basis = tolerance_for(spec)
    # The graph interpreter runs exactly the traced graph; the profiling executor's first calls would
    # add ~30 ms of optimisation passes for two calls, which is most of a cpu-check's own work.
    with torch.no_grad(), torch.jit.optimized_execution(False):
        first = compare(traced(*inputs), reference, atol, rtol)
        other = fresh_inputs(spec)
        second = compare(traced(*other), module(*other), atol, rtol)
    return {
        "checked": True,
        "where": where,
        "device_verified": on_device,
        "skipped_reason": None,
        "dtype": spec.inputs.dtype,
        "atol": atol,
        "rtol": rtol,
        "tolerance_basis": basis,
        "max_abs_error": max(first["max_abs_error"], second["max_abs_error"]),
        "max_rel_error": max(first["max_rel_error"], second["max_rel_error"]),
        "match": first["match"] and second["match"],
        "example_inputs": first,
        "fresh_inputs": second,
    }


def skipped(spec: CompileSpec, reason: str) -> dict[str, Any]:
    atol, rtol, basis = tolerance_for(spec)
    return {"checked": False, "where": None, "device_verified": False, "skipped_reason": reason,
            "dtype": spec.inputs.dtype, "atol": atol, "rtol": rtol, "tolerance_basis": basis,
            "max_abs_error": None, "max_rel_error": None, "match": None}

