"""The real window launched 20 times in a row under Xvfb, as tests/test_gui_relaunch.py launches it a few times:
the first launch compiles the seed preset, every one shows its preview, none crashes; and how long a launch took."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from tests.test_gui_relaunch import relaunch

LAUNCHES = 20


def run() -> list[str]:
    if not os.environ.get("DISPLAY"):  # each launch uses the xcb platform on this display
        return ["No X display: the relaunch loop needs one (make bench starts Xvfb when xvfb-run is installed)."]
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-relaunch-") as tmp:
        started = time.perf_counter()
        results = relaunch(Path(tmp), LAUNCHES)
        took = time.perf_counter() - started
    crashed = [r for r in results if r["exit"] != 0]
    first_ok = results[0]["seen"] == {"preview": "seed", "compile": "succeeded"}
    previews = sum(r["seen"] == {"preview": "seed"} for r in results[1:])
    return [
        f"{LAUNCHES} launches of the window in {took:.1f} s ({took / LAUNCHES:.2f} s a launch, the first compiling):",
        f"- exits other than 0: {len(crashed)}" + (f" (launches {[r['launch'] for r in crashed]})" if crashed else ""),
        f"- the first launch previewed and compiled the seed: {'yes' if first_ok else 'no'}",
        f"- later launches that showed the seed's preview: {previews} of {LAUNCHES - 1}",
    ]
