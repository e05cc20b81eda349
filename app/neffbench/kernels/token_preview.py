"""Preview pieces shared by the kernels whose buckets are token counts: histograms with torch, the preview's
token cap, and the error of the kernel against the same formula in float64 (torch; preview thread only)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from neffbench.kernels.plots import Plot, Series
from neffbench.kernels.tolerances import TOLERANCES

MAX_PREVIEW_ELEMENTS = 8_000_000  # of one input: a preview stays well under a second on a laptop
DTYPE_EPS = {"float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10}
BINS = 64


def same_bins(named: Sequence[tuple[str, torch.Tensor]]) -> list[Series]:
    """Histograms over one common range with torch.histc: several times faster than numpy on 10^6 values."""
    lo = min(float(t.min()) for _, t in named)
    hi = max(float(t.max()) for _, t in named)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # float16 overflow of a huge product
        lo, hi = -1.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, BINS + 1)
    return [
        Series(name, edges, torch.histc(t.float(), bins=BINS, min=lo, max=hi).numpy().astype(np.int64))
        for name, t in named
    ]


def preview_tokens(bucket: int, row_elements: int) -> tuple[int, str]:
    """How many tokens the preview builds (at most the bucket), and the note saying so when fewer."""
    cap = max(1, MAX_PREVIEW_ELEMENTS // max(1, row_elements))
    if bucket <= cap:
        return bucket, ""
    return cap, (
        f"Bucket {bucket} has more tokens than the preview holds, so it shows inputs made for {cap} "
        f"tokens (same seed, other values). "
    )


def within(diff: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> bool:
    """torch.allclose's |a - b| <= atol + rtol * |b|, without its temporaries."""
    return bool((diff - rtol * ref.abs()).max() <= atol)


def float64_error(
    out: torch.Tensor, ref: torch.Tensor, dtype: str
) -> tuple[Plot, dict[str, str], dict[str, bool | None]]:
    """The per-token error plot, and the badges "max |eager - float64|" and "dtype cost" with their verdicts."""
    diff = (out.double() - ref).abs()
    err_rows = diff.amax(dim=-1)
    max_err = float(err_rows.max())
    atol, rtol = TOLERANCES[dtype]
    tokens = int(err_rows.shape[0])
    plot = Plot(
        "Error against float64",
        "curve",
        "token",
        "max |eager - float64|",
        [
            Series("per token", np.arange(tokens), err_rows.numpy()),
            Series(f"{dtype} atol", [0, max(tokens - 1, 1)], [atol, atol], "reference"),
        ],
        note=f"Largest difference per row between the {dtype} kernel and the same formula in float64.",
    )
    cost = max_err / (float(ref.abs().max()) or 1.0)
    badges = {
        "max |eager - float64|": f"{max_err:.3g}",
        "dtype cost": f"{cost:.2g} of max |out| = {cost / DTYPE_EPS[dtype]:.2g} {dtype} eps",
    }
    return plot, badges, {"max |eager - float64|": within(diff, ref, atol, rtol), "dtype cost": None}
