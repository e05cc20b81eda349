"""What RoPE's preview shows, as plain data: numpy arrays and numbers, no torch.

Torch-free so that a preview computed in another process (the warm probe, while the window's own torch
loads) can be unpickled and drawn by a process that has not imported torch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec


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
    # The table as the NEFF receives it, in the cache dtype, widened to float32 (exactly: float32 holds every
    # bfloat16 and float16 value), so that drawing it needs no torch.
    table: np.ndarray
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
        return self.table[first:last:step], first, step

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
