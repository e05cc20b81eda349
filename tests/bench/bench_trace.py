"""``neffbench.trace`` of the seed on ``cpu-check`` in a warm process, against a bare ``torch.jit.trace`` of the same
wrapper, and the same call again served from the cache."""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "seed.py"
ROUNDS = 7
TARGET_OVERHEAD_S, TARGET_HIT_S = 0.2, 0.1


def _quiet(line: str) -> None:
    del line


def run() -> list[str]:
    import torch

    import neffbench

    with tempfile.TemporaryDirectory(prefix="neffbench-bench-") as tmp:
        here = os.getcwd()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the script's own trace warms the process up
                seed = runpy.run_path(str(SEED))
        finally:
            os.chdir(here)
        wrapper = seed["wrapper"]
        example = (seed["positions"], seed["q"], seed["k"], seed["cache"])
        bare, traced, hits = [], [], []
        for i in range(ROUNDS):
            t0 = time.perf_counter()
            torch.jit.trace(wrapper, example)
            bare.append(time.perf_counter() - t0)
            workdir = Path(tmp) / f"wd{i}"
            t0 = time.perf_counter()
            neffbench.trace(wrapper, example, compiler_workdir=workdir, backend="cpu-check", on_line=_quiet)
            traced.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            neffbench.trace(wrapper, example, compiler_workdir=workdir, backend="cpu-check", on_line=_quiet)
            hits.append(time.perf_counter() - t0)
            assert neffbench.jobs(workdir)[0].cached
    b, t, h = statistics.median(bare), statistics.median(traced), statistics.median(hits)
    met = t - b <= TARGET_OVERHEAD_S and h <= TARGET_HIT_S
    return [
        f"examples/seed.py's wrapper and inputs in one warm process (the script ran first), {ROUNDS} alternated "
        "rounds, median; each round a fresh workdir.",
        "",
        "| call | wall time |",
        "| --- | --- |",
        f"| bare `torch.jit.trace(wrapper, inputs)` | {b * 1e3:.0f} ms |",
        f"| `neffbench.trace(wrapper, inputs)` on cpu-check (a job recorded, numerics checked) | {t * 1e3:.0f} ms |",
        f"| added by neffbench.trace | {(t - b) * 1e3:+.0f} ms |",
        f"| the same call again, served from the cache | {h * 1e3:.0f} ms |",
        "",
        f"Targets: at most {TARGET_OVERHEAD_S:g} s added, a cache hit within {TARGET_HIT_S:g} s: "
        f"{'met' if met else 'NOT met'}.",
    ]
