"""The plot previews of the kernels that have one of their own, at a Llama size: the suite checks that their work
does not grow with the size (tests/test_kernel_*.py count calls); here is how long they take."""

from __future__ import annotations

import statistics
import time

RUNS = 5
TARGETS_S = {"rms_norm": 1.0, "silu_and_mul": 2.0}


def run() -> list[str]:
    from neffbench.kernels.rms_norm.kernel import KERNEL as RMS_NORM
    from neffbench.kernels.rms_norm.params import RmsNormCompileSpec
    from neffbench.kernels.silu_and_mul.kernel import KERNEL as SILU_AND_MUL
    from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec

    lines = [
        f"| kernel preview at its default (Llama) size | total, median of {RUNS}, ms | target |",
        "|---|---|---|",
    ]
    for name, kernel, spec, size in (
        ("rms_norm", RMS_NORM, RmsNormCompileSpec(), "128 tokens x 4096"),
        ("silu_and_mul", SILU_AND_MUL, SiluAndMulCompileSpec(), "128 tokens x 2*14336"),
    ):
        kernel.preview(spec)  # torch's first use of each operation
        totals = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            kernel.preview(spec)
            totals.append(time.perf_counter() - t0)
        lines.append(f"| {name}, {size} | {statistics.median(totals) * 1e3:.0f} | under {TARGETS_S[name] * 1e3:.0f} |")
    return lines
