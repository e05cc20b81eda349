"""What a compare costs: ``neffbench compare`` of a tiny 12-layer model on the CPU runtime, taps at depth 1, against
one ``neffbench run`` of the same job plus one compile of the same spec (target: within 3x; the compile dominates
on a real host, the rest must not)."""

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
ROUNDS = 3
TARGET = 3.0

MODEL = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class Tiny(nn.Module):
    def __init__(self, width=64, layers=12):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(Block(width) for _ in range(layers))
        self.head = nn.Linear(width, width)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)
"""
SPEC = """
name = "tiny12"
kernel = "module"
workdir = "wd"

[module]
entry = "model.py:Tiny"

[inputs]
x = "f32[4,64]"
"""


def _timed(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "neffbench", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def run() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-") as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "model.py").write_text(MODEL, encoding="utf-8")
        (tmp / "spec.toml").write_text(SPEC, encoding="utf-8")
        _timed(["compile", "spec.toml", "--backend", "cpu-check"], tmp)
        (job,) = [p.parent for p in (tmp / "wd").glob("*/job.json")]
        runs, compiles, compares, taps = [], [], [], 0
        for _ in range(ROUNDS):  # alternated, so drift in machine load hits all three alike
            runs.append(_timed(["run", str(job), "--runtime", "cpu"], tmp))
            compiles.append(_timed(["compile", "spec.toml", "--backend", "cpu-check", "--no-cache"], tmp))
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "neffbench", "compare", str(job), "--runtime", "cpu", "--depth", "1"]
                + ["--no-cache", "--json"],
                cwd=tmp,
                env={**os.environ, "PYTHONWARNINGS": "ignore"},
                check=False,
                capture_output=True,
                text=True,
            )
            if proc.returncode not in (0, 3):  # within tolerance, or a tap diverges: both are a compare made
                raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
            compares.append(time.perf_counter() - t0)
            taps = len(json.loads(proc.stdout)["taps"])
        run_s, compile_s, compare_s = (statistics.median(x) for x in (runs, compiles, compares))
        ratio = compare_s / (run_s + compile_s)
        verdict = "meets" if ratio <= TARGET else "MISSES"
        return [
            f"- compare of a 12-layer model ({taps} taps at depth 1, CPU runtime, tapped compile not cached): "
            f"{compare_s:.2f} s, median of {ROUNDS}",
            f"- one `neffbench run` of the job {run_s:.2f} s + one compile of the spec {compile_s:.2f} s = "
            f"{run_s + compile_s:.2f} s",
            f"- ratio {ratio:.2f}x: {verdict} the target of {TARGET:g}x",
        ]
