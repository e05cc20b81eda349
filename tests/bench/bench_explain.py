"""``neffbench explain`` on a 1,000,000-line compiler log, against ``grep -c ERROR`` on the same file."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.log_soup import big_compile_log

REPO = Path(__file__).resolve().parents[2]
LINES = int(os.environ.get("NEFFBENCH_BENCH_LOG_LINES", "1000000"))
ROUNDS = 3
TARGET_RATIO, TARGET_S = 10.0, 3.0


def _wall(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, check=False, capture_output=True, text=True)
    return time.perf_counter() - t0, done.stdout


def run() -> list[str]:
    from neffbench.compilerlog.explain import explain

    with tempfile.TemporaryDirectory(prefix="neffbench-bench-") as tmp:
        log = Path(tmp) / "log-neuron-cc.txt"
        log.write_bytes(big_compile_log(LINES))
        size_mb = log.stat().st_size / 1e6
        grep = shutil.which("grep")
        greps = [_wall([grep, "-c", "ERROR", str(log)])[0] for _ in range(ROUNDS)] if grep else []
        cli, out = [], ""
        for _ in range(ROUNDS):
            took, out = _wall([sys.executable, "-m", "neffbench", "explain", "--json", str(log)])
            cli.append(took)
        inproc = []
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            explain(log)
            inproc.append(time.perf_counter() - t0)
        found = json.loads(out)
    g, c, i = (statistics.median(greps) if greps else float("nan")), statistics.median(cli), statistics.median(inproc)
    ratio = c / g if greps else float("nan")
    met = ratio <= TARGET_RATIO and c < TARGET_S
    return [
        f"A synthetic {LINES:,}-line debug-verbosity compile log ({size_mb:.0f} MB; DEBUG records, a pass every few "
        f"hundred lines, an NCC_EOOM001 failure at the end), median of {ROUNDS} runs.",
        "",
        "| command | wall time |",
        "|---|---|",
        f"| `grep -c ERROR` | {g:.3f} s |",
        f"| `neffbench explain --json` (the whole command, Python start included) | {c:.2f} s |",
        f"| of which reading and explaining (in-process `explain()`) | {i:.2f} s |",
        "",
        f"It found status {found['status']}, first error {found['first_error']['code']} at line "
        f"{found['first_error']['line']:,}, {len(found['passes'])} pass runs.",
        f"Target: within {TARGET_RATIO:g}x of grep and under {TARGET_S:g} s: {ratio:.1f}x, "
        f"{'met' if met else 'NOT met'}.",
    ]
