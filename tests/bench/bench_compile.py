"""What the compile orchestration costs: a ``neffbench compile`` cpu-check job against a bare torch.jit.trace script.

Both sides import torch, build the seed's module and inputs, trace and save. The job adds the CLI,
the worker's start, the event protocol, the eager reference, verification, reproduce.py and the
records. Target: at most 0.5 s and at most 10% more wall time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 7
TARGET_S, TARGET_FRACTION = 0.5, 0.10

BARE = """
import sys
import torch
from neffbench.kernels.rope.build import build_module, example_inputs
from neffbench.presets import load_preset

spec = load_preset("seed")
module = build_module(spec).eval()
inputs = example_inputs(spec)
traced = torch.jit.trace(module, inputs, strict=False, check_trace=False)
torch.jit.save(traced, sys.argv[1])
if len(sys.argv) > 2:
    import os

    os._exit(0)  # skip the interpreter's teardown, as the worker does
"""


def _timed(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def run() -> list[str]:
    bare: list[float] = []
    quick: list[float] = []
    job: list[float] = []
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-") as tmp:
        # --no-cache: every round compiles (a hit would skip the worker this measures).
        compile_cmd = [
            sys.executable,
            "-m",
            "neffbench",
            "compile",
            "seed",
            "--backend",
            "cpu-check",
            "--no-cache",
            "--workdir",
        ]
        # One warm-up of each so that neither side pays for a cold file cache.
        _timed([sys.executable, "-c", BARE, f"{tmp}/warm.pt"])
        _timed([*compile_cmd, f"{tmp}/warm"])
        for i in range(ROUNDS):  # alternated, so drift in machine load hits all alike
            bare.append(_timed([sys.executable, "-c", BARE, f"{tmp}/bare-{i}.pt"]))
            quick.append(_timed([sys.executable, "-c", BARE, f"{tmp}/quick-{i}.pt", "exit-now"]))
            job.append(_timed([*compile_cmd, f"{tmp}/jobs"]))
    b, q, j = statistics.median(bare), statistics.median(quick), statistics.median(job)
    # Measured against the bare script without its teardown, which the worker skips too: the
    # overhead is then only what the orchestration adds.
    extra = j - q
    fraction = extra / q
    ok = extra <= TARGET_S and fraction <= TARGET_FRACTION
    return [
        f"Seed preset, cpu-check backend, {ROUNDS} alternated rounds after a warm-up (median wall time; min in "
        "brackets).",
        "",
        "| run | wall time |",
        "|---|---|",
        f"| bare script: torch.jit.trace + save, normal exit | {b:.3f} s ({min(bare):.3f} s) |",
        f"| same, leaving with `os._exit` (no interpreter teardown) | {q:.3f} s ({min(quick):.3f} s) |",
        f"| `neffbench compile seed --backend cpu-check` | {j:.3f} s ({min(job):.3f} s) |",
        f"| orchestration overhead (job - bare without teardown) | {extra:+.3f} s ({fraction:+.1%}) |",
        "",
        f"Target: at most {TARGET_S} s and {TARGET_FRACTION:.0%}: {'met' if ok else 'NOT met'}. Against the bare "
        f"script with its normal exit the job is {j - b:+.3f} s.",
    ]
