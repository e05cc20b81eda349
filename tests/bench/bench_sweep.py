"""Sweeps: 8 cpu-check points two at a time against one after another, and the Ray executor's cost per task over the local one."""

from __future__ import annotations

import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 5
RAY_ROUNDS = 3
POINTS = 8
RAY_POINTS = 4
SPEEDUP_TARGET = 1.6
OVERHEAD_TARGET_S = 1.0


def _sweep_cli(workdir: Path, jobs: int) -> float:
    tokens = ",".join(str(n) for n in range(1, POINTS + 1))
    args = [
        sys.executable,
        "-m",
        "neffbench",
        "sweep",
        "seed",
        "--over",
        f"inputs.num_tokens={tokens}",
        "--backend",
        "cpu-check",
        "--no-cache",
        "--jobs",
        str(jobs),
        "--workdir",
        str(workdir),
    ]
    t0 = time.perf_counter()
    subprocess.run(
        args,
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return time.perf_counter() - t0


def _local_vs_parallel(tmp: Path) -> tuple[list[float], list[float]]:
    serial, parallel = [], []
    for i in range(ROUNDS):  # alternated, so drift in the machine's load falls on both
        serial.append(_sweep_cli(tmp / f"s{i}", 1))
        parallel.append(_sweep_cli(tmp / f"p{i}", 2))
    return serial, parallel


def _ray_overhead(tmp: Path) -> tuple[float, float, float, float] | None:
    try:
        import ray
    except ImportError:
        return None
    from neffbench.presets import load_preset
    from neffbench.sweeps import plan, run_sweep

    seed = load_preset("seed")
    tokens = [n for n in range(1, RAY_POINTS + 1)]

    def timed(executor: str, wd: Path, values: list[int]) -> float:
        p = plan(seed, {"inputs.num_tokens": values}, backend="cpu-check")
        t0 = time.perf_counter()
        result = run_sweep(p, executor=executor, jobs=1, backend="cpu-check", workdir=wd, use_cache=False)
        assert result.state == "succeeded", result.record["points"]
        return time.perf_counter() - t0

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 2**20,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    try:
        cold = timed("ray", tmp / "cold", [1])  # the cluster's first task: worker processes and imports
        local, remote = [], []
        for i in range(RAY_ROUNDS):
            local.append(timed("local", tmp / f"l{i}", tokens))
            remote.append(timed("ray", tmp / f"r{i}", tokens))
    finally:
        ray.shutdown()
    lo, rm = statistics.median(local), statistics.median(remote)
    return lo, rm, (rm - lo) / RAY_POINTS, cold


def run() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-sweep-") as name:
        tmp = Path(name)
        serials, parallels = _local_vs_parallel(tmp)
        overhead = _ray_overhead(tmp)
    serial, parallel = statistics.median(serials), statistics.median(parallels)
    speedup = serial / parallel
    rounds = ", ".join(f"{s / p:.2f}x" for s, p in zip(serials, parallels))
    lines = [
        f"The seed preset swept over {POINTS} token counts with `cpu-check` and `--no-cache` (the whole "
        f"`neffbench sweep` command, median of {ROUNDS} alternated rounds, {os.cpu_count()} CPUs; load average "
        f"{os.getloadavg()[0]:.1f} at the end).",
        "",
        "| run | wall time |",
        "|---|---|",
        f"| `--jobs 1`: the points one after another | {serial:.2f} s |",
        f"| `--jobs 2` | {parallel:.2f} s ({speedup:.2f}x; per round {rounds}) |",
        "",
        f"Target: at least {SPEEDUP_TARGET}x: {'met' if speedup >= SPEEDUP_TARGET else 'NOT met'}.",
    ]
    if overhead is None:
        return [*lines, "", "Ray is not installed: the Ray executor's overhead was not measured."]
    lo, rm, per_task, cold = overhead
    return [
        *lines,
        "",
        f"The Ray executor against the local one, {RAY_POINTS} points one at a time (`--jobs 1`) on a one-node "
        f"cluster started in-process (`ray.init(num_cpus=2)`), median of {RAY_ROUNDS} alternated rounds.",
        "",
        "| run | wall time |",
        "|---|---|",
        f"| local executor, {RAY_POINTS} points | {lo:.2f} s |",
        f"| ray executor, {RAY_POINTS} points | {rm:.2f} s |",
        f"| overhead per task | {per_task:+.3f} s |",
        f"| first sweep on a fresh cluster, 1 point (worker processes start, imports) | {cold:.2f} s |",
        "",
        f"Target: under {OVERHEAD_TARGET_S:g} s per task: {'met' if per_task < OVERHEAD_TARGET_S else 'NOT met'}.",
    ]
