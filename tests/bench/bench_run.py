"""What a run costs: the cpu runtime's recorded p50 against a bare loop calling the same TorchScript, and the
time from Run to the first result for the seed job."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ITERATIONS = 2000
ROUNDS = 5
TARGET_FRACTION = 0.05

# The same TorchScript, the same inputs, the same clock: nothing of the workbench around it.
BARE = """
import json, sys, time
import torch
from neffbench.runs import arrays
job = sys.argv[1]
feeds = arrays.load(job + "/inputs.npz")
args = tuple(arrays.to_tensor(feeds.arrays[n], feeds.dtypes[n]) for n in feeds.arrays)
module = torch.jit.load(job + "/model.pt", map_location="cpu")
n = int(sys.argv[2])
clock = time.perf_counter_ns
out = []
with torch.no_grad():
    module(*args)
    for _ in range(5):
        module(*args)
    for _ in range(n):
        t0 = clock()
        module(*args)
        out.append((clock() - t0) / 1e6)
out.sort()
print(json.dumps({"p50": out[len(out) // 2]}))
"""


def _seed_job(tmp: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "neffbench", "compile", "seed", "--backend", "cpu-check", "--workdir", str(tmp / "wd")],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return next((tmp / "wd").glob("*/job.json")).parent


def run() -> list[str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-") as tmp_s:
        tmp = Path(tmp_s)
        job = _seed_job(tmp)
        bare, ours, first = [], [], []
        for _ in range(ROUNDS):  # alternated, so drift in machine load hits both alike
            proc = subprocess.run(
                [sys.executable, "-c", BARE, str(job), str(ITERATIONS)],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            bare.append(json.loads(proc.stdout.strip().splitlines()[-1])["p50"])
            t0 = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "neffbench",
                    "run",
                    str(job),
                    "--runtime",
                    "cpu",
                    "--iterations",
                    str(ITERATIONS),
                    "--warmup",
                    "5",
                    "--json",
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            record = json.loads(proc.stdout)
            ours.append(record["stats"]["p50_ms"])
            # Run to first result: the run command with one iteration, from its start to its exit.
            t1 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "neffbench",
                    "run",
                    str(job),
                    "--runtime",
                    "cpu",
                    "--iterations",
                    "1",
                    "--warmup",
                    "0",
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                check=True,
            )
            first.append(time.perf_counter() - t1)
            del t0
    b, o = statistics.median(bare), statistics.median(ours)
    fraction = (o - b) / b
    return [
        f"Seed job (cpu-check), the cpu runtime's TorchScript, {ITERATIONS} iterations, {ROUNDS} alternated rounds "
        "(median of the per-round p50s).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| bare loop: the same model.pt and inputs.npz, `perf_counter_ns` around each call, p50 | {b * 1e3:.1f} µs |",
        f"| `neffbench run JOB --runtime cpu`, recorded p50 | {o * 1e3:.1f} µs |",
        f"| difference | {fraction:+.1%} |",
        f"| Run to first result (`neffbench run JOB --iterations 1`, start to exit) | {statistics.median(first):.2f} s |",
        "",
        f"Target: p50 within {TARGET_FRACTION:.0%} of the bare loop's: "
        f"{'met' if abs(fraction) <= TARGET_FRACTION else 'NOT met'}.",
    ]
