"""SiluAndMul's preview: the SiLU curve over the gate's values, value histograms and the error against float64."""

from __future__ import annotations

import time

import numpy as np
import torch

from neffbench.kernels.plots import KernelPreview, Plot, Series
from neffbench.kernels.silu_and_mul.build import build_module, example_inputs
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec as CompileSpec
from neffbench.kernels.token_preview import float64_error, preview_tokens, same_bins

# The verdict uses the tolerances the workbench verifies traced outputs with.
from neffbench.schema.problems import problem_lines

# Above this many input elements the preview uses fewer tokens (and says so) rather than allocate gigabytes.
# Machine epsilon: the dtype's cost reads in these units (rounding once costs at most half of one).
# The curve always covers [-6, 6]: where SiLU bends (its minimum is -0.278 at x = -1.278).
CURVE_SPAN = 6.0


def reference(x: torch.Tensor) -> torch.Tensor:
    """gate / (1 + exp(-gate)) * up in float64: what the dtype costs is measured against it."""
    d = x.shape[-1] // 2
    gate, up = x[..., :d].double(), x[..., d:].double()
    return gate / (1.0 + torch.exp(-gate)) * up


def _curve(lo: float, hi: float) -> Plot:
    t = np.linspace(min(lo, -CURVE_SPAN), max(hi, CURVE_SPAN), 481)
    silu = t / (1.0 + np.exp(-t))
    span = [float(silu.min()), float(silu.max())]
    return Plot(
        "SiLU over the gate's values",
        "curve",
        "gate",
        "silu(gate)",
        [
            Series("silu(x) = x * sigmoid(x)", t, silu),
            Series(f"gate min {lo:.3g}", [lo, lo], span, "reference"),
            Series(f"gate max {hi:.3g}", [hi, hi], span, "reference"),
        ],
        note="Between the markers lie the gate values the example input feeds SiLU; below -5 it is about 0, "
        "above 5 about x.",
    )


def compute(spec: CompileSpec, bucket: int | None = None) -> KernelPreview:
    """The preview of ``spec`` for one bucket (default: the first); ValueError for a spec with errors."""
    from neffbench.kernels import registry  # the kernel's own rules, as any caller asks for them

    problems = registry.for_spec(spec).section_errors(spec)
    if problems:
        raise ValueError(problem_lines(problems))
    d, dtype = spec.act.intermediate_size, spec.inputs.dtype
    tokens, note = preview_tokens(
        spec.inputs.num_tokens[0] if bucket is None else bucket, 2 * spec.act.intermediate_size
    )
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
    error, badges, verdicts = float64_error(out32, ref, dtype)
    gate, up = x[:, :d], x[:, d:]
    lo, hi = (float(v) for v in torch.aminmax(gate.float()))
    t3 = time.perf_counter()
    timings["reference"] = t3 - t2

    outputs = Plot(
        "Output values",
        "histogram",
        "silu(gate) * up",
        "count",
        same_bins([("output", out32)]),
        note=note + "Mostly near 0: SiLU of a negative gate is small, and the up half scales the rest.",
    )
    inputs = Plot(
        "Input values",
        "histogram",
        "value",
        "count",
        same_bins([("gate (x[:, :d])", gate), ("up (x[:, d:])", up)]),
        note="The two halves of the input on the same bins.",
    )
    badges["gate range"] = f"[{lo:.3g}, {hi:.3g}]"
    verdicts["gate range"] = None
    plots = [_curve(lo, hi), outputs, inputs, error]
    timings["plots"] = time.perf_counter() - t3
    timings["total"] = time.perf_counter() - t0
    return KernelPreview(f"SiluAndMul: {tokens} x 2*{d} {dtype}", plots, badges, verdicts, timings)
