"""A profile of the NEFF with the job's inputs: ``neuron-explorer capture`` (or the deprecated ``neuron-profile``)
of the second execution, then its summary. Runs in the run child, into the run's own directory."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from neffbench.runs.arrays import Arrays

TOOLS = ("neuron-explorer", "neuron-profile")
TIMEOUT_S = 1800.0
SUMMARY_FIELDS = ("total_time", "mfu_estimated_percent")


def tool() -> str | None:
    return next((t for t in TOOLS if shutil.which(t)), None)


def capture(req: dict[str, Any], feeds: Arrays, out: Any) -> dict[str, Any]:
    name = tool()
    if name is None or not req.get("neff"):
        why = "neither neuron-explorer nor neuron-profile is on PATH" if name is None else "there is no NEFF"
        return {"captured": False, "reason": why}
    run_dir = Path(req["run_dir"])
    run_dir.mkdir(parents=True, exist_ok=True)
    ntff = run_dir / "profile.ntff"
    argv = [name, "capture", "-n", req["neff"], "-s", str(ntff)]
    for key in feeds.neff_names:
        path = run_dir / f"{key}.npy"
        np.save(path, feeds.arrays[key])
        argv += [key, str(path)]
    # The first execution carries about a millisecond of start-up: profile the second.
    argv += ["--profile-nth-exec", "2"]
    out.line("neffbench: " + " ".join(argv))
    # Not through neffbench.procs: the tool stays in the run child's process group on purpose, so that
    # Cancel, the run's timeout and the run child's lifeline reach it with the rest of the run.
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    for line in (proc.stdout + proc.stderr).splitlines():
        out.line(line)
    # With --profile-nth-exec the tool names the file for the execution (profile_exec_2.ntff) beside -s.
    profiles = sorted(run_dir.glob("*.ntff"))
    if proc.returncode != 0 or not profiles:
        why = f"{name} capture exited with {proc.returncode}" + ("" if profiles else " and wrote no .ntff")
        return {"captured": False, "command": argv, "reason": why}
    ntff = profiles[-1]
    view = [name, "view", "-d", str(run_dir), "--output-format", "summary-json"]
    summary: dict[str, Any] = {}
    shown = subprocess.run(view, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    try:
        data = json.loads(shown.stdout[shown.stdout.find("{") :]) if "{" in shown.stdout else {}
        summary = data if isinstance(data, dict) else {}
    except ValueError:
        summary = {}
    return {
        "captured": True,
        "tool": name,
        "command": argv,
        "ntff": str(ntff),
        "summary": {k: _find(summary, k) for k in SUMMARY_FIELDS},
        "open": f"{name} view -d {run_dir}",
    }


def _find(data: Any, key: str) -> Any:
    """A summary field wherever the summary nests it."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        for value in data.values():
            found = _find(value, key)
            if found is not None:
                return found
    elif isinstance(data, list):
        for value in data:
            found = _find(value, key)
            if found is not None:
                return found
    return None
