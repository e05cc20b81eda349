"""SiluAndMul's preview: the SiLU curve over the gate's values, value histograms and the error against float64."""

from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np
import torch

# The verdict uses the tolerances the workbench verifies traced outputs with.
from neffbench.kernels.api import TOLERANCES
from neffbench.kernels.plots import KernelPreview, Plot, Series
from neffbench.kernels.silu_and_mul.build import build_module, example_inputs
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec as CompileSpec

# Above this many input elements the preview uses fewer tokens (and says so) rather than allocate gigabytes.
MAX_PREVIEW_ELEMENTS = 8_000_000
# Machine epsilon: the dtype's cost reads in these units (rounding once costs at most half of one).
DTYPE_EPS = {"float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10}
BINS = 64
# The curve always covers [-6, 6]: where SiLU bends (its minimum is -0.278 at x = -1.278).
CURVE_SPAN = 6.0


def reference(x: torch.Tensor) -> torch.Tensor:
    """gate / (1 + exp(-gate)) * up in float64: what the dtype costs is measured against it."""
    d = x.shape[-1] // 2
    gate, up = x[..., :d].double(), x[..., d:].double()
    return gate / (1.0 + torch.exp(-gate)) * up


def same_bins(named: Sequence[tuple[str, torch.Tensor]]) -> list[Series]:
    """Histograms over one common range with torch.histc: several times faster than numpy on 10^6 values."""
    lo = min(float(t.min()) for _, t in named)
    hi = max(float(t.max()) for _, t in named)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # float16 overflow of a huge product
        lo, hi = -1.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, BINS + 1)
    return [Series(name, edges, torch.histc(t.float(), bins=BINS, min=lo, max=hi).numpy().astype(np.int64))
            for name, t in named]


def _tokens(spec: CompileSpec, bucket: int) -> tuple[int, str]:
    cap = max(1, MAX_PREVIEW_ELEMENTS // max(1, 2 * spec.act.intermediate_size))
    if bucket <= cap:
        return bucket, ""
    return cap, (f"Bucket {bucket} has more tokens than the preview holds, so it shows inputs made for {cap} "
                 f"tokens (same seed, other values). ")


def _curve(lo: float, hi: float) -> Plot:
    t = np.linspace(min(lo, -CURVE_SPAN), max(hi, CURVE_SPAN), 481)
    silu = t / (1.0 + np.exp(-t))
    span = [float(silu.min()), float(silu.max())]
    return Plot(
        "SiLU over the gate's values", "curve", "gate", "silu(gate)",
        [Series("silu(x) = x * sigmoid(x)", t, silu), Series(f"gate min {lo:.3g}", [lo, lo], span, "reference"),
         Series(f"gate max {hi:.3g}", [hi, hi], span, "reference")],
        note="Between the markers lie the gate values the example input feeds SiLU; below -5 it is about 0, "
             "above 5 about x.")


def compute(spec: CompileSpec, bucket: int | None = None) -> KernelPreview:
    """The preview of ``spec`` for one bucket (default: the first); ValueError for a spec with errors."""
    from neffbench.spec import errors

    problems = errors(spec)
    if problems:
        raise ValueError("; ".join(f"{p.field}: {p.message}" for p in problems))
    d, dtype = spec.act.intermediate_size, spec.inputs.dtype
    tokens, note = _tokens(spec, spec.inputs.num_tokens[0] if bucket is None else bucket)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    (x,) = example_inputs(spec, tokens)
    module = build_module(spec).eval()
    t1 = time.perf_counter()
    timings["inputs"] = t1 - t0
    with torch.no_grad():
        out = module(x)
    t2 = time.perf_counter()
    timings["eager"] = t2 - t1

    ref = reference(x)
    out32 = out.float()
    diff = (out32.double() - ref).abs()
    err_rows = diff.amax(dim=-1)
    max_err = float(err_rows.max())
    atol, rtol = TOLERANCES[dtype]
    passed = bool((diff - rtol * ref.abs()).max() <= atol)  # torch.allclose's rule without its temporaries
    largest = float(ref.abs().max()) or 1.0
    gate, up = x[:, :d], x[:, d:]
    lo, hi = (float(v) for v in torch.aminmax(gate.float()))
    t3 = time.perf_counter()
    timings["reference"] = t3 - t2

    idx = np.arange(tokens)
    outputs = Plot("Output values", "histogram", "silu(gate) * up", "count", same_bins([("output", out32)]),
                   note=note + "Mostly near 0: SiLU of a negative gate is small, and the up half scales the rest.")
    inputs = Plot("Input values", "histogram", "value", "count", same_bins([("gate (x[:, :d])", gate),
                                                                            ("up (x[:, d:])", up)]),
                  note="The two halves of the input on the same bins.")
    error = Plot(
        "Error against float64", "curve", "token", "max |eager - float64|",
        [Series("per token", idx, err_rows.numpy()),
         Series(f"{dtype} atol", [0, max(tokens - 1, 1)], [atol, atol], "reference")],
        note=f"Largest difference per row between the {dtype} kernel and the same formula in float64.")
    cost = max_err / largest
    badges = {
        "max |eager - float64|": f"{max_err:.3g}",
        "dtype cost": f"{cost:.2g} of max |out| = {cost / DTYPE_EPS[dtype]:.2g} {dtype} eps",
        "gate range": f"[{lo:.3g}, {hi:.3g}]",
    }
    verdicts: dict[str, bool | None] = {"max |eager - float64|": passed, "dtype cost": None, "gate range": None}
    plots = [_curve(lo, hi), outputs, inputs, error]
    timings["plots"] = time.perf_counter() - t3
    timings["total"] = time.perf_counter() - t0
    return KernelPreview(f"SiluAndMul: {tokens} x 2*{d} {dtype}", plots, badges, verdicts, timings)
