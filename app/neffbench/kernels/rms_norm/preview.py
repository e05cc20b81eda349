"""RMSNorm's preview: per-token RMS before and after, value histograms and the error against float64."""

from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np
import torch

# The verdict uses the tolerances the workbench verifies traced outputs with.
from neffbench.kernels.api import TOLERANCES
from neffbench.kernels.plots import KernelPreview, Plot, Series
from neffbench.kernels.rms_norm.build import build_module, example_inputs
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec as CompileSpec

# Above this many elements of x the preview uses fewer tokens (and says so) rather than allocate gigabytes.
MAX_PREVIEW_ELEMENTS = 8_000_000
# Machine epsilon: the dtype's cost reads in these units (rounding once costs at most half of one).
DTYPE_EPS = {"float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10}
BINS = 64


def reference(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor,
              eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out, x + residual, per-row RMS) in float64 throughout: what the dtype costs is measured against it."""
    h = x.double() if residual is None else x.double() + residual.double()
    rms = torch.linalg.vector_norm(h, dim=-1, keepdim=True) / math.sqrt(h.shape[-1])
    return h * (torch.rsqrt(rms * rms + eps) * weight.double()), h, rms.squeeze(-1)


def same_bins(named: Sequence[tuple[str, torch.Tensor]]) -> list[Series]:
    """Histograms over one common range with torch.histc: several times faster than numpy on 10^6 values."""
    lo = min(float(t.min()) for _, t in named)
    hi = max(float(t.max()) for _, t in named)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # only eps <= 0 gets here, which validation refuses
        lo, hi = -1.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, BINS + 1)
    return [Series(name, edges, torch.histc(t.float(), bins=BINS, min=lo, max=hi).numpy().astype(np.int64))
            for name, t in named]


def _within(diff: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> bool:
    """torch.allclose's |a - b| <= atol + rtol * |b|, without its temporaries."""
    return bool((diff - rtol * ref.abs()).max() <= atol)


def _tokens(spec: CompileSpec, bucket: int) -> tuple[int, str]:
    cap = max(1, MAX_PREVIEW_ELEMENTS // max(1, spec.norm.hidden_size))
    if bucket <= cap:
        return bucket, ""
    return cap, (f"Bucket {bucket} has more tokens than the preview holds, so it shows inputs made for {cap} "
                 f"tokens (same seed, other values). ")


def compute(spec: CompileSpec, bucket: int | None = None) -> KernelPreview:
    """The preview of ``spec`` for one bucket (default: the first); ValueError for a spec with errors."""
    from neffbench.spec import errors

    problems = errors(spec)
    if problems:
        raise ValueError("; ".join(f"{p.field}: {p.message}" for p in problems))
    n, dtype = spec.norm, spec.inputs.dtype
    tokens, note = _tokens(spec, spec.inputs.num_tokens[0] if bucket is None else bucket)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    inputs = example_inputs(spec, tokens)
    module = build_module(spec).eval()
    t1 = time.perf_counter()
    timings["inputs"] = t1 - t0
    with torch.no_grad():
        got = module(*inputs)
    t2 = time.perf_counter()
    timings["eager"] = t2 - t1

    out, res_out = (got[0], got[1]) if n.with_residual else (got, None)
    weight = inputs[-1] if n.weight_mode == "input" else module.weight
    ref, h, rms_before = reference(inputs[0], inputs[1] if n.with_residual else None, weight, n.eps)
    out32 = out.float()
    diff = (out32.double() - ref).abs()
    err_rows = diff.amax(dim=-1)
    max_err = float(err_rows.max())
    atol, rtol = TOLERANCES[dtype]
    passed = _within(diff, ref, atol, rtol)
    largest = float(ref.abs().max()) or 1.0
    weight_rms = float(torch.linalg.vector_norm(weight.double()) / math.sqrt(n.hidden_size))
    t3 = time.perf_counter()
    timings["reference"] = t3 - t2

    idx = np.arange(tokens)
    ends = [0, max(tokens - 1, 1)]
    what = "x + residual" if n.with_residual else "x"
    rms = Plot(
        "RMS per token", "curve", "token", "RMS",
        [Series(f"before ({what})", idx, rms_before.numpy()),
         Series("after (out)", idx, (torch.linalg.vector_norm(out32, dim=-1) / math.sqrt(n.hidden_size)).numpy()),
         Series("weight RMS (expected after)", ends, [weight_rms, weight_rms], "reference")],
        note=note + "Every row comes out with about the weight's RMS, whatever its RMS going in.")
    hist = Plot(
        "Values", "histogram", "value", "count", same_bins([(f"input ({what})", h), ("output", out32)]),
        note="The output is each input row rescaled to RMS 1 and multiplied by the weight; both on the same bins.")
    error = Plot(
        "Error against float64", "curve", "token", "max |eager - float64|",
        [Series("per token", idx, err_rows.numpy()), Series(f"{dtype} atol", ends, [atol, atol], "reference")],
        note=f"Largest difference per row between the {dtype} kernel and the same formula in float64.")
    cost = max_err / largest
    badges = {
        "max |eager - float64|": f"{max_err:.3g}",
        "dtype cost": f"{cost:.2g} of max |out| = {cost / DTYPE_EPS[dtype]:.2g} {dtype} eps",
        "weight RMS": f"{weight_rms:.4g}",
    }
    verdicts: dict[str, bool | None] = {"max |eager - float64|": passed, "dtype cost": None, "weight RMS": None}
    if res_out is not None:
        res_diff = (res_out.double() - h).abs()
        badges["residual |err|"] = f"{float(res_diff.max()):.3g}"
        verdicts["residual |err|"] = _within(res_diff, h, atol, rtol)
    timings["plots"] = time.perf_counter() - t3
    timings["total"] = time.perf_counter() - t0
    title = f"RMSNorm: {tokens} x {n.hidden_size} {dtype}, eps {n.eps:g}"
    return KernelPreview(title, [rms, hist, error], badges, verdicts, timings)
