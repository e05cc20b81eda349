"""Traced-versus-eager numerics: max absolute and relative error and a per-dtype tolerance verdict.

Also what the dtype itself costs: each output of the eager module against a float64 run of the
same module, where the module allows one. Runs inside the worker (it needs torch).
"""

from __future__ import annotations

from typing import Any

import torch

from neffbench.kernels import registry
from neffbench.kernels.api import Built
from neffbench.kernels.tolerances import TOLERANCES
from neffbench.taps.compare import float64_refusal, float64_twin

# --auto-cast moves FP32 arithmetic to another type, so the error to expect is that type's.
_AUTO_CAST_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}
_AUTO_CAST_TOLERANCES = {"tf32": (1e-3, 1e-3), "fp8_e4m3": (0.25, 0.125)}


def tolerance_for(spec: Any) -> tuple[float, float, str]:
    """(atol, rtol, what they were chosen for)."""
    dtype = registry.for_spec(spec).dtype(spec)
    c = spec.compiler
    if c.auto_cast != "none" and dtype == "float32":
        basis = f"float32 auto-cast to {c.auto_cast_type}"
        if c.auto_cast_type in _AUTO_CAST_DTYPES:
            return (*TOLERANCES[_AUTO_CAST_DTYPES[c.auto_cast_type]], basis)
        return (*_AUTO_CAST_TOLERANCES[c.auto_cast_type], basis)
    atol, rtol = TOLERANCES.get(dtype, TOLERANCES["float32"])
    return atol, rtol, dtype


def as_tuple(out: Any) -> tuple[torch.Tensor, ...]:
    if isinstance(out, torch.Tensor):
        return (out,)
    return tuple(out)


def _errors(a: torch.Tensor, b: torch.Tensor, atol: float) -> tuple[float, float]:
    a64, b64 = a.detach().double(), b.detach().double()
    diff = (a64 - b64).abs()
    big = b64.abs() > atol
    max_abs = float(diff.max()) if diff.numel() else 0.0
    max_rel = float((diff[big] / b64.abs()[big]).max()) if bool(big.any()) else 0.0
    return max_abs, max_rel


def compare(actual: Any, expected: Any, atol: float, rtol: float, names: tuple[str, ...] = ()) -> dict[str, Any]:
    """Element-wise comparison; ``match`` is torch.allclose's |a-b| <= atol + rtol*|b|.

    The relative error is taken over elements with |b| > atol only: near zero it says nothing.
    ``names`` are the outputs' names to the kernel (recorded beside output0..M).
    """
    got, want = as_tuple(actual), as_tuple(expected)
    outputs = []
    for i in range(max(len(got), len(want))):
        entry: dict[str, Any] = {"name": f"output{i}"}
        if i < len(names):
            entry["role"] = names[i]
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
        entry["max_abs_error"], entry["max_rel_error"] = _errors(a, b, atol)
        if a.dtype.is_floating_point or b.dtype.is_floating_point:
            entry["match"] = bool(
                torch.allclose(a.detach().double(), b.detach().double(), atol=atol, rtol=rtol, equal_nan=True)
            )
        else:
            # An int32 output of a NEFF stands for the module's int64 one (neuronx-cc downcasts int64).
            entry["match"] = bool(torch.equal(a.to(b.dtype), b))
        outputs.append(entry)
    return {
        "max_abs_error": max((o.get("max_abs_error", float("inf")) for o in outputs), default=0.0),
        "max_rel_error": max((o.get("max_rel_error", float("inf")) for o in outputs), default=0.0),
        "match": all(o["match"] for o in outputs),
        "outputs": outputs,
    }


def fresh_inputs(spec: Any) -> tuple[torch.Tensor, ...]:
    """Other values of the same shapes: a trace that baked an input's values in fails on these."""
    kernel = registry.for_spec(spec)
    return kernel.example_inputs(kernel.with_seed(spec, kernel.seed(spec) + 1))


def dtype_cost(built: Built, reference: Any) -> dict[str, Any]:
    """Each output of the eager run against the same module run in float64: what the dtype costs.

    Not possible for every module (integer-only paths, ops without a float64 kernel, modules that
    pin their dtype); then ``checked`` is False with the reason.
    """
    try:
        module64, inputs64 = float64_twin(built.module, built.inputs)
        with torch.no_grad():
            out64 = module64(*inputs64)
    except Exception as exc:  # noqa: BLE001 - any refusal of the module means "not possible here"
        return {"checked": False, "reason": float64_refusal(exc)}
    got, want = as_tuple(reference), as_tuple(out64)
    outputs = []
    for i, (a, b) in enumerate(zip(got, want)):
        entry: dict[str, Any] = {"name": f"output{i}", "dtype": str(a.dtype).replace("torch.", "")}
        if i < len(built.output_names):
            entry["role"] = built.output_names[i]
        if a.shape == b.shape:
            entry["max_abs_error"], entry["max_rel_error"] = _errors(a, b, 0.0)
        outputs.append(entry)
    return {
        "checked": True,
        "outputs": outputs,
        "max_abs_error": max((o.get("max_abs_error", 0.0) for o in outputs), default=0.0),
    }


def _copies(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    # Each call gets its own copy: a forward writing into its inputs (or its lifted state) must not change
    # what the next call is given.
    return tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in inputs)


def generalises(report: Any, traced: Any, built: Built, spec: Any, tracer_warnings: Any = None) -> None:
    """The CPU trace on other values than its example's, against the eager module: what was fixed at trace time
    (a branch on a tensor's value) shows here, before any compiler runs. One traced and one eager call."""
    atol, rtol, _ = tolerance_for(spec)
    other = fresh_inputs(spec)
    with torch.no_grad(), torch.jit.optimized_execution(False):
        result = compare(traced(*_copies(other)), built.module(*_copies(other)), atol, rtol, built.output_names)
    if not result["match"]:
        report.error(not_general(result, tracer_warnings.first_own if tracer_warnings is not None else None))


def not_general(result: dict[str, Any], fixed_at: str | None) -> str:
    """The sentence for a trace that differs from the eager module on other inputs than its own."""
    worst = max(result["outputs"], key=lambda o: o.get("max_abs_error", float("inf")))
    by = f" by up to {worst['max_abs_error']:.3g}" if "max_abs_error" in worst else f": {worst.get('problem')}"
    see = (
        f"; the TracerWarning at {fixed_at} says where (a Python value taken from a tensor there is a constant of "
        "the graph)"
        if fixed_at
        else ""
    )
    return (
        f"the trace does not hold for other inputs: on other values than the example's its "
        f"'{worst.get('role', worst['name'])}' differs from the eager module{by}, so something was fixed at trace "
        f"time{see}. A NEFF computes what the trace does: make the forward's control flow independent of tensor "
        "values (torch.where instead of if)"
    )


def carry(
    call: Any,
    eager: Any,
    spec: Any,
    user: tuple[Any, ...],
    state: tuple[Any, ...],
    *,
    names: tuple[str, ...],
    input_names: tuple[str, ...],
    steps: int,
    keeps_state: bool,
    tolerance: tuple[float, float],
    first: int = 0,
    consumed: dict[str, int] | None = None,
    expected_first: Any = None,
    artifact_state: tuple[Any, ...] | None = None,
) -> list[dict[str, Any]]:
    """A module with state called ``steps`` times, its state carried from each call to the next, against the eager
    module carried the same way: each call's comparison, numbered from ``first``.

    ``user`` and ``state``: the first call's inputs and the state before it; later calls take the kernel's
    ``step_inputs`` (``consumed`` counts the elements each input took before, a prefill's included).
    ``keeps_state``: the artifact holds its state itself (on a device) and takes the inputs alone; otherwise it
    is given the state it returned last (``artifact_state`` before the first call, when it differs from the eager
    module's), as ``eager`` is.
    """
    kernel = registry.for_spec(spec)
    atol, rtol = tolerance
    n = len(state)
    counted = dict(consumed or {name: 0 for name in input_names})
    own_state, results = (state if artifact_state is None else artifact_state), []
    for step in range(first, first + steps):
        if step != first:
            user = kernel.step_inputs(spec, step, counted)
        expected = expected_first if step == first and expected_first is not None else None
        if expected is None:
            expected = as_tuple(eager(*_copies(user), *_copies(state)))
        got = as_tuple(call(*_copies(user)) if keeps_state else call(*_copies(user), *_copies(own_state)))
        results.append({"step": step, **compare(got, expected, atol, rtol, names)})
        state, own_state = expected[len(expected) - n :], got[len(got) - n :]
        for name, tensor in zip(input_names, user):
            counted[name] = counted.get(name, 0) + tensor.numel()
    return results


def _stepped(call: Any, built: Built, spec: Any, reference: Any, keeps_state: bool, steps: int) -> list[dict]:
    """The compile's check of a module with state: its example call and the next ones, state carried."""
    atol, rtol, _ = tolerance_for(spec)
    n = len(built.state)
    k = len(built.inputs) - n
    return carry(
        call,
        built.module,
        spec,
        built.inputs[:k],
        built.inputs[k:],
        names=built.output_names,
        input_names=built.input_names[:k],
        steps=steps,
        keeps_state=keeps_state,
        tolerance=(atol, rtol),
        expected_first=reference,
    )


STATE_STEPS = 3  # a compile's check of a module with state: the example's call and two more, state carried


def verify(
    traced: Any, built: Built, spec: Any, reference: Any, *, where: str, on_device: bool, keeps_state: bool = False
) -> dict[str, Any]:
    """Run ``traced`` on the example inputs and on fresh ones, against the eager module; a module with state is
    run STATE_STEPS times instead, its state carried from call to call on both sides."""
    atol, rtol, basis = tolerance_for(spec)
    names = built.output_names
    # The graph interpreter runs exactly the traced graph; the profiling executor's first calls would
    # add ~30 ms of optimisation passes for two calls, which is most of a cpu-check's own work.
    with torch.no_grad(), torch.jit.optimized_execution(False):
        if built.state:
            steps = _stepped(traced, built, spec, reference, keeps_state, STATE_STEPS)
            first, second = steps[0], steps[1]
        else:
            steps = None
            first = compare(traced(*_copies(built.inputs)), reference, atol, rtol, names)
            other = fresh_inputs(spec)
            second = compare(traced(*_copies(other)), built.module(*_copies(other)), atol, rtol, names)
    checked = steps or [first, second]
    out = {
        "checked": True,
        "where": where,
        "device_verified": on_device,
        "skipped_reason": None,
        "dtype": registry.for_spec(spec).dtype(spec),
        "atol": atol,
        "rtol": rtol,
        "tolerance_basis": basis,
        "max_abs_error": max(c["max_abs_error"] for c in checked),
        "max_rel_error": max(c["max_rel_error"] for c in checked),
        "match": all(c["match"] for c in checked),
        "example_inputs": first,
        "fresh_inputs": second,
        "dtype_cost": dtype_cost(built, reference),
    }
    if steps is not None:
        out["steps"] = [{k: s[k] for k in ("step", "match", "max_abs_error", "max_rel_error")} for s in steps]
        out["state"] = list(built.state)
    return out


def skipped(spec: Any, reason: str, built: Built | None = None, reference: Any = None) -> dict[str, Any]:
    atol, rtol, basis = tolerance_for(spec)
    out: dict[str, Any] = {
        "checked": False,
        "where": None,
        "device_verified": False,
        "skipped_reason": reason,
        "dtype": registry.for_spec(spec).dtype(spec),
        "atol": atol,
        "rtol": rtol,
        "tolerance_basis": basis,
        "max_abs_error": None,
        "max_rel_error": None,
        "match": None,
    }
    if built is not None and reference is not None:
        out["dtype_cost"] = dtype_cost(built, reference)
    return out
