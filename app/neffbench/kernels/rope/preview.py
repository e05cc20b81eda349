"""Preview numbers for a spec, computed with the kernel that gets compiled: the cos/sin table, its
frequencies, the rotation of the example inputs, the pair-norm check and the cast error.

Qt-free: the workbench computes this on a worker thread and ``neffbench preview`` in the foreground.
Nothing here is downsampled; plots downsample only what they draw (see :meth:`Preview.display_rows`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np
import torch

from neffbench.kernels.rope.build import build_module, example_inputs, rope_scaling
from neffbench.kernels.rope.ops import _yarn_correction_dim, frequencies
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.kernels.rope.preview_data import (  # noqa: F401 - the preview's API, defined torch-free
    Boundary,
    Frequencies,
    PairCheck,
    Preview,
    PreviewError,
    Rotation,
)
from neffbench.kernels.rope.preview_table import Table, cached_table, clear_cache  # noqa: F401 - clear_cache: the preview's API
from neffbench.kernels.tolerances import TOLERANCES
from neffbench.schema import is_active
from neffbench.schema.problems import problem_lines

# The rotation preview needs every example input in memory; above this many query elements
# it uses fewer tokens (and says so) rather than allocate gigabytes.
MAX_PREVIEW_ELEMENTS = 8_000_000
# Relative change of an inverse frequency that still counts as "left as it is".
_SAME = 1e-6
_COARSENESS = {"float32": 0, "float16": 1, "bfloat16": 2}


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
        raise PreviewError(problem_lines(problems))
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
        table.widened,
        table.error,
        table.error_at,
        freqs,
        rotation,
        check,
        timings,
    )
