"""Warm start: a ``neffbench compile`` whose worker is forked by a warm-start server against one started afresh.

The command is the same (seed, cpu-check, ``--no-cache``), alternated round by round; ``NEFFBENCH_WARM_SERVER`` says
which. CPU is the command's and its worker's, user and system: a fresh worker is the command's child; a forked one
is the server's, whose reaped children's time ``/proc/PID/stat`` keeps. Target: a forked worker's CPU at most half
a fresh one's.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from neffbench import procs

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 7
TICK = os.sysconf("SC_CLK_TCK")


def _reaped_children_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / TICK  # cutime, cstime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _compile(workdir: str, env: dict[str, str], server: procs.WarmServer | None) -> tuple[float, float]:
    argv = [sys.executable, "-m", "neffbench", "compile", "seed", "--backend", "cpu-check", "--no-cache"]
    before = _children_cpu() + (_reaped_children_cpu(server.pid) if server else 0.0)
    t0 = time.perf_counter()
    done = subprocess.run([*argv, "--workdir", workdir], env=env, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr
    after = _children_cpu() + (_reaped_children_cpu(server.pid) if server else 0.0)
    return wall, after - before


def run() -> list[str]:
    server = procs.start_warm_server()
    assert server is not None, "the warm-start server did not start"
    fresh, forked = [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cold_env = {**os.environ, procs.WARM_ENV: "off"}
            warm_env = {**os.environ, procs.WARM_ENV: server.address}
            _compile(tmp, warm_env, server)  # the first of each pays for the page cache
            _compile(tmp, cold_env, None)
            for _ in range(ROUNDS):
                fresh.append(_compile(tmp, cold_env, None))
                forked.append(_compile(tmp, warm_env, server))
    finally:
        server.stop()

    def median(rows: list[tuple[float, float]], k: int) -> float:
        return statistics.median(r[k] for r in rows)

    return [
        f"`neffbench compile seed --backend cpu-check --no-cache`, {ROUNDS} alternated rounds, median; CPU is the "
        "command's and its worker's (user + system).",
        "",
        "| worker | wall time | CPU |",
        "| --- | --- | --- |",
        f"| started afresh (`NEFFBENCH_WARM_SERVER=off`) | {median(fresh, 0):.3f} s | {median(fresh, 1):.2f} s |",
        f"| forked by the warm-start server | {median(forked, 0):.3f} s | {median(forked, 1):.2f} s |",
        f"| forked / afresh | {median(forked, 0) / median(fresh, 0):.2f}x | {median(forked, 1) / median(fresh, 1):.2f}x |",
    ]
