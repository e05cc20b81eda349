"""Every tap of a device run against a reference run: the error figures, the verdict and where it first diverges.

An element is within tolerance when |device - ref| <= atol + rtol * |ref| (``torch.allclose``'s rule, with
the tolerance of the tap's dtype from ``neffbench.kernels.tolerances.TOLERANCES``); NaN against NaN and an
infinity against the same infinity are equal. Everything is computed in float64, so a float64 reference of
a bfloat16 module compares in float64 with bfloat16's tolerance: what the dtype costs, judged by what the
dtype promises.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neffbench.kernels.tolerances import TOLERANCES
from neffbench.taps.select import Tap, unusual_tensors
from neffbench.words import message_text

REFERENCES = ("vs_eager", "vs_float64")
# A tap's ``problem`` when there was nothing to compare it with: no figure, and no failure either. (Compares kept
# before a tap could be "not compared" recorded these as failures; their readers go by the problem.)
NOT_COMPARED = ("no device output", "no reference output")


@dataclass
class TapResult:
    """One tap against one reference. ``times_tolerance`` is the worst element's |error| over its allowance
    (over 1: fails); ``scale_share`` is max_abs over the reference's max |value|; ``growth`` that share over
    the previous tap's (None for the first tap, or when the previous one was exact). ``ok`` is None when the tap
    was not compared (no output of it to compare, ``problem`` says which): nothing is known of it, so it is no
    failure."""

    name: str
    module: str
    dtype: str
    atol: float
    rtol: float
    ok: bool | None
    max_abs: float | None = None
    max_rel: float | None = None
    scale_share: float | None = None
    cosine: float | None = None
    nan: int = 0
    inf: int = 0
    times_tolerance: float | None = None
    growth: float | None = None
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("name", "module")}


@dataclass
class Comparison:
    """Per reference (``vs_eager``, ``vs_float64``): each tap's figures, and the first tap over tolerance.

    ``measured`` is what was set against the references: ``device`` (the runtime's outputs of the taps) or, when
    the runtime gave none, ``eager`` (the eager run on this CPU in the module's dtype, against float64 only)."""

    taps: list[Tap]
    results: dict[str, list[TapResult]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # reference -> why it was not compared
    measured: str = "device"

    def first_divergent(self, reference: str) -> TapResult | None:
        """The first tap over tolerance; a tap that was not compared is none."""
        return next((r for r in self.results.get(reference, []) if r.ok is False), None)


def tolerance(dtype: str) -> tuple[float, float]:
    """(atol, rtol) for a tap's dtype: integers must be equal, an unknown float dtype gets float32's."""
    if dtype in TOLERANCES:
        return TOLERANCES[dtype]
    if "int" in dtype or dtype == "bool":
        return TOLERANCES["int"]
    return TOLERANCES["float32"]


def as_float64(value: Any, dtype: str | None = None) -> np.ndarray:
    """A tensor or array in float64. A uint16 array for a bfloat16 tap holds its bits (as ``inputs.npz`` does)."""
    if hasattr(value, "detach"):
        import torch

        from neffbench.usercode.tensors import dense

        tensor = dense(value)
        return (tensor.to(torch.float64) if tensor.dtype != torch.bool else tensor.to(torch.int64)).numpy()
    array = np.asarray(value)
    if dtype == "bfloat16" and array.dtype == np.uint16:
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float64)


def _cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    finite = np.isfinite(a) & np.isfinite(b)
    if not finite.any():
        return None
    if np.array_equal(a, b):  # exactly 1, not 1 less an ulp of the norms' rounding
        return 1.0
    a, b = a[finite], b[finite]
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 1.0 if na == nb else 0.0
    return float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


Tolerance = tuple[float, float]  # (atol, rtol)


def measure(tap: Tap, device: Any, reference: Any, tol: Tolerance | None = None) -> TapResult:
    """One tap's figures: device output against the reference's, with ``tol`` or the tolerance of ``tap.dtype``."""
    atol, rtol = tol or tolerance(tap.dtype)
    got, want = as_float64(device, tap.dtype), as_float64(reference, tap.dtype)
    entry = TapResult(tap.name, tap.module, tap.dtype, atol, rtol, ok=False)
    entry.nan, entry.inf = int(np.isnan(got).sum()), int(np.isinf(got).sum())
    if got.shape != want.shape:
        entry.problem = f"shape {list(got.shape)} instead of {list(want.shape)}"
        return entry
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        diff = np.where(same, 0.0, np.abs(got - want))
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN against a number, or inf against -inf
        allowed = atol + rtol * np.abs(want)
        ratio = np.where(diff == 0.0, 0.0, diff / allowed)  # an exact integer tolerance: any error is infinite
        big = np.abs(want) > atol
        finite_ref = np.abs(want[np.isfinite(want)])
    empty = diff.size == 0
    entry.max_abs = 0.0 if empty else float(diff.max())
    entry.max_rel = float((diff[big] / np.abs(want[big])).max()) if big.any() else 0.0
    scale = float(finite_ref.max()) if finite_ref.size else 0.0
    entry.scale_share = entry.max_abs / scale if scale > 0 else (0.0 if entry.max_abs == 0.0 else float("inf"))
    entry.cosine = _cosine(got, want)
    entry.times_tolerance = 0.0 if empty else float(ratio.max())
    entry.ok = entry.times_tolerance <= 1.0
    return entry


def _lookup(outputs: Mapping[str, Any] | Sequence[Any], tap: Tap, index: int) -> Any:
    if isinstance(outputs, Mapping):
        return outputs.get(tap.name, outputs.get(tap.module))
    return outputs[index] if index < len(outputs) else None


def compare_one(taps: Sequence[Tap], device: Any, reference: Any, tol: Tolerance | None = None) -> list[TapResult]:
    """Every tap against one reference; outputs by tap name (or module path), or a sequence in tap order."""
    results: list[TapResult] = []
    previous: float | None = None
    for i, tap in enumerate(taps):
        got, want = _lookup(device, tap, i), _lookup(reference, tap, i)
        if got is None or want is None:
            atol, rtol = tol or tolerance(tap.dtype)
            entry = TapResult(
                tap.name, tap.module, tap.dtype, atol, rtol, ok=None, problem=NOT_COMPARED[0 if got is None else 1]
            )
        else:
            entry = measure(tap, got, want, tol)
        if previous and entry.scale_share is not None:
            entry.growth = entry.scale_share / previous
        previous = entry.scale_share
        results.append(entry)
    return results


def compare(
    taps: Sequence[Tap],
    device: Mapping[str, Any] | Sequence[Any],
    eager: Mapping[str, Any] | Sequence[Any],
    float64: Mapping[str, Any] | Sequence[Any] | str | None = None,
    eager_tolerance: Tolerance | None = None,
    *,
    no_device: str | None = None,
) -> Comparison:
    """Each tap against the eager run in the module's dtype and, when given, the float64 run (a string: why
    there is none, as ``float64_reference`` returns it). ``eager_tolerance`` replaces the dtype's against eager
    only, for a compile that changes the arithmetic (``--auto-cast``: ``backends.verify.tolerance_for``); the
    float64 reference is always judged by what the taps' dtype promises.

    ``no_device``: why the runtime gave no output of the taps (a NEFF job on a host without a NeuronCore). Then
    nothing is set against eager (no tap fails, none is first divergent there), and what can still be compared
    is: the eager run itself, on this CPU in the module's dtype, against float64."""
    out = Comparison(list(taps))
    if no_device is None:
        out.results["vs_eager"] = compare_one(taps, device, eager, eager_tolerance)
    else:
        out.skipped["vs_eager"] = no_device
        out.measured, device = "eager", eager
    if isinstance(float64, str):
        out.skipped["vs_float64"] = float64
    elif float64 is None:
        out.skipped["vs_float64"] = "no float64 reference was given."
    else:
        out.results["vs_float64"] = compare_one(taps, device, float64)
    return out


def tapped_outputs(module: Any, inputs: Sequence[Any], taps: Sequence[Tap]) -> dict[str, Any]:
    """Each tap's output of an eager run of ``module`` on ``inputs``, by tap name."""
    import torch

    from neffbench.taps.wrapper import Tapped

    with Tapped(module, taps) as tapped, torch.no_grad():
        return tapped.split(tapped(*inputs))[1]


class Float64Refused(Exception):
    """A module that cannot be run in float64; the message is the reason a record gives."""


def float64_twin(module: Any, inputs: Sequence[Any]) -> tuple[Any, tuple[Any, ...]]:
    """A float64 copy of ``module`` and ``inputs`` (integer inputs stay integers). A copy that fails on a parameter
    or buffer that is not a plain dense tensor is neffbench's limit, and Float64Refused says so, naming it."""
    try:
        module64 = copy.deepcopy(module).double()
    except Exception as exc:  # noqa: BLE001 - the user's tensors may refuse a copy any way they like
        unusual = unusual_tensors(module)
        if not unusual:
            raise
        role, name, what = unusual[0]
        raise Float64Refused(
            f"neffbench cannot copy the {role} '{name}' ({what}) to run the module in float64: "
            f"{type(exc).__name__}: {_first_line(exc)}; this is a limit of neffbench, not of your module"
        ) from exc
    # Copies of integer inputs too: a forward writing into its inputs must leave the job's own as they were.
    return module64, tuple(t.double() if t.is_floating_point() else t.clone() for t in inputs)


def float64_refusal(exc: Exception) -> str:
    """Why a module did not run in float64: Float64Refused's own words, else the error (ops without a float64
    kernel, a module that pins its dtype)."""
    if isinstance(exc, Float64Refused):
        return str(exc)
    return f"the module does not run in float64: {type(exc).__name__}: {message_text(str(exc))}".rstrip(": ")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else ""


def float64_reference(module: Any, inputs: Sequence[Any], taps: Sequence[Tap]) -> dict[str, Any] | str:
    """Each tap's output of a float64 copy of ``module`` on float64 inputs (integer inputs stay integers), or
    why the module does not run in float64."""
    try:
        return tapped_outputs(*float64_twin(module, inputs), taps)
    except Exception as exc:  # noqa: BLE001 - any refusal of the module means "not possible here"
        return float64_refusal(exc)
