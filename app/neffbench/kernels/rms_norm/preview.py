"""RMSNorm's preview: per-token RMS before and after, value histograms and the error against float64."""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from neffbench.kernels.plots import KernelPreview, Plot, Series
from neffbench.kernels.rms_norm.build import build_module, example_inputs
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec as CompileSpec
from neffbench.kernels.token_preview import float64_error, preview_tokens, same_bins, within
from neffbench.kernels.tolerances import TOLERANCES  # the verifier's: the verdict judges as a job does
from neffbench.schema.problems import problem_lines

# Above this many elements of x the preview uses fewer tokens (and says so) rather than allocate gigabytes.
# Machine epsilon: the dtype's cost reads in these units (rounding once costs at most half of one).


def reference(
    x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out, x + residual, per-row RMS) in float64 throughout: what the dtype costs is measured against it."""
    h = x.double() if residual is None else x.double() + residual.double()
    rms = torch.linalg.vector_norm(h, dim=-1, keepdim=True) / math.sqrt(h.shape[-1])
    return h * (torch.rsqrt(rms * rms + eps) * weight.double()), h, rms.squeeze(-1)


def compute(spec: CompileSpec, bucket: int | None = None) -> KernelPreview:
    """The preview of ``spec`` for one bucket (default: the first); ValueError for a spec with errors."""
    from neffbench.kernels import registry  # the kernel's own rules, as any caller asks for them

    problems = registry.for_spec(spec).section_errors(spec)
    if problems:
        raise ValueError(problem_lines(problems))
    n, dtype = spec.norm, spec.inputs.dtype
    tokens, note = preview_tokens(spec.inputs.num_tokens[0] if bucket is None else bucket, spec.norm.hidden_size)
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
    weight = inputs[-1] if module.weight is None else module.weight  # None: the weight is the last input
    ref, h, rms_before = reference(inputs[0], inputs[1] if n.with_residual else None, weight, n.eps)
    out32 = out.float()
    atol, rtol = TOLERANCES[dtype]
    error, badges, verdicts = float64_error(out32, ref, dtype)
    weight_rms = float(torch.linalg.vector_norm(weight.double()) / math.sqrt(n.hidden_size))
    t3 = time.perf_counter()
    timings["reference"] = t3 - t2

    idx = np.arange(tokens)
    ends = [0, max(tokens - 1, 1)]
    what = "x + residual" if n.with_residual else "x"
    rms = Plot(
        "RMS per token",
        "curve",
        "token",
        "RMS",
        [
            Series(f"before ({what})", idx, rms_before.numpy()),
            Series("after (out)", idx, (torch.linalg.vector_norm(out32, dim=-1) / math.sqrt(n.hidden_size)).numpy()),
            Series("weight RMS (expected after)", ends, [weight_rms, weight_rms], "reference"),
        ],
        note=note + "Every row comes out with about the weight's RMS, whatever its RMS going in.",
    )
    hist = Plot(
        "Values",
        "histogram",
        "value",
        "count",
        same_bins([(f"input ({what})", h), ("output", out32)]),
        note="The output is each input row rescaled to RMS 1 and multiplied by the weight; both on the same bins.",
    )
    badges["weight RMS"] = f"{weight_rms:.4g}"
    verdicts["weight RMS"] = None
    if res_out is not None:
        res_diff = (res_out.double() - h).abs()
        badges["residual |err|"] = f"{float(res_diff.max()):.3g}"
        verdicts["residual |err|"] = within(res_diff, h, atol, rtol)
    timings["plots"] = time.perf_counter() - t3
    timings["total"] = time.perf_counter() - t0
    title = f"RMSNorm: {tokens} x {n.hidden_size} {dtype}, eps {n.eps:g}"
    return KernelPreview(title, [rms, hist, error], badges, verdicts, timings)
