"""RoPE's preview table: the cos/sin cache built as the kernel builds it, cast to the cache dtype block by block
and measured, the last one kept so a change of another field does not build it again."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import torch

from neffbench.kernels.rope.build import rope_scaling
from neffbench.kernels.rope.ops import TORCH_DTYPES, build_cos_sin_cache
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec

_BLOCK_ROWS = 512


@dataclass(frozen=True)
class Table:
    """The spec's cos/sin table: as built (float32), cast to the cache dtype, and the worst error of the cast."""

    reference: np.ndarray
    cast: torch.Tensor  # in the cache dtype (numpy has no bfloat16)
    widened: np.ndarray  # ``cast`` in float32 (exact), for drawing without torch
    error: float
    error_at: tuple[int, int]


_REFERENCE_CACHE: dict[tuple, torch.Tensor] = {}
_TABLE_CACHE: dict[tuple, Table] = {}
_CACHE_LOCK = threading.Lock()


def _reference_key(spec: CompileSpec) -> tuple:
    scaling = rope_scaling(spec) or {}
    return (spec.model.effective_rotary_dim, spec.rope.max_pos, spec.rope.base, tuple(sorted(scaling.items())))


def _cast(reference: torch.Tensor, cache_dtype: str) -> Table:
    dtype = TORCH_DTYPES[cache_dtype]
    if dtype == torch.float32:
        return Table(reference.numpy(), reference, reference.numpy(), 0.0, (0, 0))
    # Cast and measure block by block: each block stays in cache, which is several times faster
    # than whole-table temporaries at 131072 positions.
    cast = torch.empty(reference.shape, dtype=dtype)
    widened = torch.empty(reference.shape, dtype=torch.float32)
    error, error_at = -1.0, 0
    for start in range(0, reference.shape[0], _BLOCK_ROWS):
        block = reference[start : start + _BLOCK_ROWS]
        out = cast[start : start + _BLOCK_ROWS]
        out.copy_(block)
        wide = widened[start : start + _BLOCK_ROWS]
        wide.copy_(out)
        worst, where = (wide - block).abs_().view(-1).max(0)
        if float(worst) > error:
            error, error_at = float(worst), start * reference.shape[1] + int(where)
    return Table(reference.numpy(), cast, widened.numpy(), max(error, 0.0), divmod(error_at, reference.shape[1]))


def cached_table(spec: CompileSpec) -> tuple[Table, bool]:
    """The spec's table, reusing the last one when only other fields changed (one of each is kept:
    at 131072 positions a table is tens of MB)."""
    ref_key = _reference_key(spec)
    key = (*ref_key, spec.rope.cache_dtype)
    with _CACHE_LOCK:
        hit = _TABLE_CACHE.get(key)
        reference = _REFERENCE_CACHE.get(ref_key)
    if hit is not None:
        return hit, True
    if reference is None:
        reference = build_cos_sin_cache(
            spec.model.effective_rotary_dim, spec.rope.max_pos, spec.rope.base, rope_scaling(spec)
        )
    table = _cast(reference, spec.rope.cache_dtype)
    with _CACHE_LOCK:
        _REFERENCE_CACHE.clear()
        _REFERENCE_CACHE[ref_key] = reference
        _TABLE_CACHE.clear()
        _TABLE_CACHE[key] = table
    return table, False


def clear_cache() -> None:
    with _CACHE_LOCK:
        _REFERENCE_CACHE.clear()
        _TABLE_CACHE.clear()
