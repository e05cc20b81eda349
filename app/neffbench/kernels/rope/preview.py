"""Preview numbers for a spec, computed with the kernel that gets compiled: the cos/sin table, its
frequencies, the rotation of the example inputs, the pair-norm check and the cast error.

Qt-free: the workbench computes this on a worker thread and ``neffbench preview`` in the foreground.
Nothing here is downsampled; plots downsample only what they draw (see :meth:`Preview.display_rows`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from neffbench.kernels.rope.build import TOLERANCES, build_module, example_inputs, rope_scaling
from neffbench.kernels.rope.ops import _yarn_correction_dim, frequencies
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.kernels.rope.preview_table import Table, cached_table, clear_cache  # noqa: F401 - clear_cache: the preview's API
from neffbench.schema import is_active

# The rotation preview needs every example input in memory; above this many query elements
# it uses fewer tokens (and says so) rather than allocate gigabytes.
MAX_PREVIEW_ELEMENTS = 8_000_000
# Relative change of an inverse frequency that still counts as "left as it is".
_SAME = 1e-6
_COARSENESS = {"float32": 0, "float16": 1, "bfloat16": 2}


class PreviewError(ValueError):
    """The spec cannot be previewed (it has errors, or the kernel rejects it)."""


@dataclass(frozen=True)
class Boundary:
    """Where the scaling type's bands meet: a wavelength (llama3) or a pair index (yarn's ramp)."""

    axis: str  # "wavelength" (positions) or "pair" (pair index)
    value: float
    label: str  # what the kernel calls it, with its value (the legend's text)


@dataclass(frozen=True)
class Frequencies:
    """Per pair index: what the scaling type did to each frequency band."""

    inv_freq: np.ndarray  # effective inverse frequency (radians per position), position scale applied
    base_inv_freq: np.ndarray  # the same without scaling
    bands: tuple[str, ...]  # "unchanged" (extrapolates), "interpolated" or "blended"
    original_max_position_embeddings: int | None  # marked when the scaling type uses it
    factor: float | None
    mscale: float
    boundaries: tuple[Boundary, ...] = ()  # every band edge the scaling type has
    band_rule: str = ""  # which side of the boundaries is which band, in a sentence

    @property
    def wavelength(self) -> np.ndarray:
        return 2 * np.pi / self.inv_freq

    @property
    def base_wavelength(self) -> np.ndarray:
        return 2 * np.pi / self.base_inv_freq


@dataclass(frozen=True)
class PairCheck:
    """Rotation keeps every rotated pair's norm (times the table's mscale) and the pass-through tail."""

    passed: bool
    max_deviation: float  # largest |norm after - mscale * norm before| over all tokens, heads, pairs
    tolerance_atol: float
    tolerance_rtol: float
    worst: tuple[str, int, int, int] | None  # (tensor, token, head, pair index)
    tail_max_change: float  # the pass-through lanes must come out unchanged (0)

    def summary(self) -> str:
        # ASCII only: ``neffbench preview`` prints this to consoles of any encoding.
        verdict = "PASS: preserved" if self.passed else "FAIL: not preserved"
        text = (
            f"{verdict}, max deviation {self.max_deviation:.3g} "
            f"(tolerance {self.tolerance_atol:g} + {self.tolerance_rtol:g}*norm)"
        )
        if self.tail_max_change:
            text += f", pass-through tail changed by {self.tail_max_change:.3g}"
        return text


@dataclass(frozen=True)
class Rotation:
    """Example inputs (widened to float32, ``[tokens, heads, head_size]``) and what the module made of them."""

    num_tokens: int  # tokens in the preview (the bucket, or fewer: see ``note``)
    bucket: int
    positions: np.ndarray
    query: np.ndarray
    query_out: np.ndarray
    key: np.ndarray | None
    key_out: np.ndarray | None
    note: str = ""


@dataclass(frozen=True)
class Preview:
    """Everything the preview plots show for one spec."""

    spec: CompileSpec
    head_size: int
    rotary_dim: int
    is_neox_style: bool
    reference: np.ndarray  # float32 table ``[max_pos, rotary_dim]`` as computed (cos | sin)
    table: torch.Tensor  # the table as the NEFF receives it, in the cache dtype
    cast_error: float  # max |reference - table| over every element
    cast_error_at: tuple[int, int]  # (position, column) where it occurs
    frequencies: Frequencies
    rotation: Rotation
    pair_check: PairCheck
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def max_pos(self) -> int:
        return int(self.table.shape[0])

    @property
    def cache_dtype(self) -> str:
        return self.spec.rope.cache_dtype

    def value(self, position: int, column: int) -> tuple[float, float]:
        """(table value, float32 value) at one element of the full table."""
        return float(self.table[position, column]), float(self.reference[position, column])

    def display_rows(self, first: int, last: int, max_rows: int) -> tuple[np.ndarray, int, int]:
        """Rows ``first..last`` for drawing, every ``step``-th when there are more than ``max_rows``.

        Returns ``(rows, first, step)``; row k of ``rows`` is position ``first + k * step``.
        Display only: numbers (readouts, errors) always come from the full table.
        """
        first = max(0, min(int(first), self.max_pos - 1))
        last = max(first + 1, min(int(last), self.max_pos))
        step = max(1, math.ceil((last - first) / max(1, max_rows)))
        return self.table[first:last:step].float().numpy(), first, step

    def pairing(self) -> list[tuple[int, int]]:
        """The lanes rotated together, in pair-index order."""
        half = self.rotary_dim // 2
        if self.is_neox_style:
            return [(i, i + half) for i in range(half)]
        return [(2 * i, 2 * i + 1) for i in range(half)]

    def numbers(self) -> dict[str, Any]:
        """The preview's figures as plain data (``neffbench preview`` writes them next to the PNGs)."""
        check = self.pair_check
        return {
            "spec": self.spec.name,
            "max_pos": self.max_pos,
            "rotary_dim": self.rotary_dim,
            "cache_dtype": self.cache_dtype,
            "cast_error": self.cast_error,
            "cast_error_at": {"position": self.cast_error_at[0], "column": self.cast_error_at[1]},
            "mscale": self.frequencies.mscale,
            "bands": {b: self.frequencies.bands.count(b) for b in ("unchanged", "interpolated", "blended")},
            "band_boundaries": [dataclasses.asdict(b) for b in self.frequencies.boundaries],
            "pair_norm_check": {
                "passed": check.passed,
                "max_deviation": check.max_deviation,
                "atol": check.tolerance_atol,
                "rtol": check.tolerance_rtol,
                "tail_max_change": check.tail_max_change,
                "worst": None if check.worst is None else dict(zip(("tensor", "token", "head", "pair"), check.worst)),
            },
            "rotation": {
                "bucket": self.rotation.bucket,
                "tokens": self.rotation.num_tokens,
                "note": self.rotation.note,
            },
            "timings_ms": {k: round(v * 1e3, 2) for k, v in self.timings.items()},
        }


# ---- frequencies ------------------------------------------------------------------------------


def _frequencies(spec: CompileSpec) -> Frequencies:
    dim, r = spec.model.effective_rotary_dim, spec.rope
    scaled = frequencies(dim, r.max_pos, r.base, rope_scaling(spec))
    base = frequencies(dim, r.max_pos, r.base, None).inv_freq.double().numpy()
    inv = scaled.inv_freq.double().numpy() * scaled.position_scale
    factor = r.factor if r.rope_type != "default" else None
    bands = []
    for eff, b in zip(inv, base):
        ratio = eff / b
        if abs(ratio - 1) <= _SAME:
            bands.append("unchanged")
        elif factor and abs(ratio * factor - 1) <= 1e-4:
            bands.append("interpolated")
        else:
            bands.append("blended")
    original = (
        r.original_max_position_embeddings if is_active(spec, "rope", "original_max_position_embeddings") else None
    )
    edges, rule = _boundaries(dim, r.base, rope_scaling(spec))
    return Frequencies(inv, base, tuple(bands), original, factor, float(scaled.mscale), edges, rule)


def _boundaries(rotary_dim: int, base: float, scaling: dict[str, Any] | None) -> tuple[tuple[Boundary, ...], str]:
    """The band edges and the rule they draw, by the formulas (and defaults) of :func:`ops.frequencies`."""
    scaling = scaling or {}
    rope_type = scaling.get("rope_type")
    if rope_type == "llama3":
        original = float(scaling["original_max_position_embeddings"])
        low, high = float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"])
        edges = (
            Boundary("wavelength", original / low, f"{original:g}/low_freq_factor = {original / low:g}"),
            Boundary("wavelength", original / high, f"{original:g}/high_freq_factor = {original / high:g}"),
        )
        return edges, (
            f"unscaled wavelength above {original / low:g}: interpolated, below {original / high:g}: "
            "unchanged, between: blended"
        )
    if rope_type == "yarn":
        original = int(scaling["original_max_position_embeddings"])
        beta_fast = float(scaling.get("beta_fast") or 32.0)
        beta_slow = float(scaling.get("beta_slow") or 1.0)
        # yarn's find_correction_range: a linear ramp from pair ``low`` (still extrapolated) to pair
        # ``high`` (fully interpolated), with ops.frequencies' floor, ceil and clamps.
        low = max(math.floor(_yarn_correction_dim(beta_fast, rotary_dim, base, original)), 0)
        high = min(math.ceil(_yarn_correction_dim(beta_slow, rotary_dim, base, original)), rotary_dim - 1)
        if low == high:
            high += 0.001
        edges = (
            Boundary("pair", float(low), f"beta_fast {beta_fast:g}: ramp starts at pair {low:g}"),
            Boundary("pair", float(high), f"beta_slow {beta_slow:g}: ramp ends at pair {high:g}"),
        )
        return edges, f"pairs up to {low:g}: unchanged, from {high:g}: interpolated, between: blended on a ramp"
    return (), ""


# ---- rotation and the pair-norm check ---------------------------------------------------------


def _preview_tokens(spec: CompileSpec, bucket: int) -> tuple[int, str]:
    width = spec.model.num_heads_q * spec.model.head_size
    cap = max(1, MAX_PREVIEW_ELEMENTS // max(1, width))
    if bucket <= cap:
        return bucket, ""
    return cap, (
        f"bucket {bucket} has more tokens than the preview holds; showing example inputs "
        f"made for {cap} tokens (same seed, so values differ from the {bucket}-token compile)"
    )


def _rotate(spec: CompileSpec, table: Table, bucket: int) -> Rotation:
    n, note = _preview_tokens(spec, bucket)
    # The example inputs exactly as the compile makes them, minus the table (already built above).
    as_buffer = dataclasses.replace(spec, rope=dataclasses.replace(spec.rope, cache_mode="buffer"))
    inputs = example_inputs(as_buffer, n)
    module = build_module(spec, cache=table.cast)
    args = inputs if spec.rope.cache_mode == "buffer" else (*inputs, table.cast)
    with torch.no_grad():
        out = module(*args)
    q_out = out[0] if spec.model.with_key else out
    k_out = out[1] if spec.model.with_key else None
    hs = spec.model.head_size

    def heads(t: torch.Tensor) -> np.ndarray:
        return t.float().reshape(n, -1, hs).numpy()

    return Rotation(
        n,
        bucket,
        inputs[0].numpy(),
        heads(inputs[1]),
        heads(q_out),
        heads(inputs[2]) if spec.model.with_key else None,
        None if k_out is None else heads(k_out),
        note,
    )


def _pair_norms(x: np.ndarray, rotary_dim: int, neox: bool) -> np.ndarray:
    if neox:
        a, b = x[..., : rotary_dim // 2], x[..., rotary_dim // 2 : rotary_dim]
    else:
        a, b = x[..., 0:rotary_dim:2], x[..., 1:rotary_dim:2]
    a, b = a.astype(np.float64), b.astype(np.float64)  # float64 so the check measures the kernel, not itself
    return np.sqrt(a * a + b * b)


def _pair_check(spec: CompileSpec, rotation: Rotation, mscale: float) -> PairCheck:
    dim, neox = spec.model.effective_rotary_dim, spec.model.is_neox_style
    # The coarser of the input and cache dtypes limits how exactly cos^2 + sin^2 = 1 holds.
    coarse = max(spec.inputs.dtype, spec.rope.cache_dtype, key=_COARSENESS.__getitem__)
    atol, rtol = TOLERANCES[coarse]
    worst_dev, worst, passed, tail = 0.0, None, True, 0.0
    pairs = [("query", rotation.query, rotation.query_out)]
    if rotation.key is not None and rotation.key_out is not None:
        pairs.append(("key", rotation.key, rotation.key_out))
    for name, before, after in pairs:
        expected = _pair_norms(before, dim, neox) * mscale
        dev = np.abs(_pair_norms(after, dim, neox) - expected)
        if dev.size:
            idx = np.unravel_index(int(np.argmax(dev)), dev.shape)
            if dev[idx] > worst_dev or worst is None:
                worst_dev, worst = float(dev[idx]), (name, int(idx[0]), int(idx[1]), int(idx[2]))
            passed &= bool(np.all(dev <= atol + rtol * expected))
        if dim < before.shape[-1]:
            change = float(np.max(np.abs(after[..., dim:] - before[..., dim:])))
            tail = max(tail, change)
    passed &= tail == 0.0
    return PairCheck(passed, worst_dev, atol, rtol, worst, tail)


# ---- entry point ------------------------------------------------------------------------------


def compute(spec: CompileSpec, *, bucket: int | None = None) -> Preview:
    """The preview of ``spec`` (raises :class:`PreviewError` for a spec with errors)."""
    from neffbench.kernels import registry  # the kernel's own rules, as any caller asks for them

    problems = registry.for_spec(spec).section_errors(spec)
    if problems:
        raise PreviewError("; ".join(f"{p.field}: {p.message}" for p in problems))
    bucket = spec.inputs.num_tokens[0] if bucket is None else bucket
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        table, cached = cached_table(spec)
        t1 = time.perf_counter()
        timings["table_cached" if cached else "table"] = t1 - t0
        freqs = _frequencies(spec)
        rotation = _rotate(spec, table, bucket)
        t2 = time.perf_counter()
        timings["rotation"] = t2 - t1
        check = _pair_check(spec, rotation, freqs.mscale)
    except (ValueError, RuntimeError) as exc:  # the kernel's own refusals
        raise PreviewError(str(exc)) from exc
    timings["total"] = time.perf_counter() - t0
    return Preview(
        spec,
        spec.model.head_size,
        spec.model.effective_rotary_dim,
        spec.model.is_neox_style,
        table.reference,
        table.cast,
        table.error,
        table.error_at,
        freqs,
        rotation,
        check,
        timings,
    )
