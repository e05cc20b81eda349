"""A profile of the NEFF with the job's inputs: ``neuron-explorer capture`` (or the deprecated ``neuron-profile``)
of the second execution, then the profile read back with its NEFF. Runs in the run child, into the run's own
directory: the NTFF, the processed tables (``profile/``) and what was read of them (``profile.json``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from neffbench.procs import write_json
from neffbench.runs import profile_tables
from neffbench.runs.arrays import Arrays

TOOLS = ("neuron-explorer", "neuron-profile")
TIMEOUT_S = 1800.0
SUMMARY_FIELDS = ("total_time", "mfu_estimated_percent", "hfu_estimated_percent")
TABLES_DIR = "profile"  # the processed profile's Parquet tables, in the run's directory
PROCESSED_NAME = "profile.json"  # what was read of them


def tool() -> str | None:
    return next((t for t in TOOLS if shutil.which(t)), None)


def capture(req: dict[str, Any], feeds: Arrays, out: Any) -> dict[str, Any]:
    name = tool()
    neff = req.get("profile_neff") or req.get("neff")
    if name is None or not neff:
        why = "neither neuron-explorer nor neuron-profile is on PATH" if name is None else "there is no NEFF"
        return {"captured": False, "reason": why}
    run_dir = Path(req["run_dir"])
    run_dir.mkdir(parents=True, exist_ok=True)
    ntff = run_dir / "profile.ntff"
    argv = [name, "capture", "-n", neff, "-s", str(ntff)]
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
    return _view(name, neff, ntff, run_dir, argv, out)


def _run(argv: list[str]) -> tuple[int, str, str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _said(stdout: str, stderr: str, code: int) -> str:
    """What a tool said when it failed: its last lines, else its exit status."""
    lines = [line.strip() for line in (stderr + "\n" + stdout).splitlines() if line.strip()]
    return " ".join(lines[-3:]) if lines else f"exit code {code}"


def version(name: str) -> str | None:
    """The tool's own version line (``neuron-explorer --version``), or None."""
    try:
        code, stdout, _ = _run([name, "--version"])
    except (OSError, subprocess.SubprocessError):
        return None
    first = stdout.strip().splitlines()[:1]
    return first[0] if code == 0 and first else None


def _view(name: str, neff: str, ntff: Path, run_dir: Path, argv: list[str], out: Any) -> dict[str, Any]:
    """The profile read back as a matched NEFF/NTFF pair (``view -n NEFF -s NTFF``): its summary, and where the
    Parquet tables can be read, each framework operation's time; saved as ``RUN_DIR/profile.json``."""
    pair = ["-n", neff, "-s", str(ntff)]
    problems: list[str] = []
    processed: dict[str, Any] | None = None
    if name == "neuron-explorer":
        tables = run_dir / TABLES_DIR
        code, stdout, stderr = _run([name, "view", *pair, "--output-format", "parquet", "--output-file", str(tables)])
        if code != 0:
            problems.append(f"{name} view could not process the profile: {_said(stdout, stderr, code)}")
        else:
            try:
                processed = {**profile_tables.read_parquet(tables), "tables": str(tables)}
            except profile_tables.TablesUnreadable as exc:
                problems.append(f"the per-layer tables were not read: {exc}")
    else:  # the deprecated neuron-profile: its JSON output, where instructions may name their layer
        code, stdout, stderr = _run([name, "view", *pair, "--output-format", "json"])
        if code == 0:
            processed = profile_tables.read_legacy_json(stdout)
        else:
            problems.append(f"{name} view could not process the profile: {_said(stdout, stderr, code)}")
    if processed is None or not processed.get("summary"):
        code, stdout, stderr = _run([name, "view", *pair, "--output-format", "summary-json"])
        if code == 0:
            try:
                summary = profile_tables.read_summary_json(stdout)
            except ValueError:
                summary = None
                problems.append(f"{name} view printed no summary JSON")
            if summary is not None:
                processed = {**summary, **({"framework": processed["framework"]} if processed else {})}
        else:
            problems.append(f"{name} view could not read the profile's summary: {_said(stdout, stderr, code)}")
    for problem in problems:
        out.line(f"neffbench: {problem}")
    summary = (processed or {}).get("summary") or {}
    result: dict[str, Any] = {
        "captured": True,
        "tool": name,
        "tool_version": version(name),
        "command": argv,
        "ntff": str(ntff),
        "neff": neff,
        "summary": {k: _find(summary, k) for k in SUMMARY_FIELDS},
        "source": (processed or {}).get("source"),
        "layers": len((processed or {}).get("framework") or []),
        "problems": problems,
        "open": f"{name} view -n {neff} -s {ntff}",
    }
    if processed is not None:
        document = {
            "schema_version": 1,
            **{k: result[k] for k in ("tool", "tool_version", "neff", "ntff", "command")},
            **processed,
        }
        result["processed"] = str(write_json(run_dir / PROCESSED_NAME, document))
    return result


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
