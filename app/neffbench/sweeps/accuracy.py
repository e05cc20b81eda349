"""A sweep's points run after they compiled (``--run``) and compared tap by tap (``--compare``), so each point has
its latency and its error: the trade-off a user picks compiler options on.

Runs happen here, one at a time, after the points have compiled (on whichever executor): a NEFF runs on this
host's device, which one process at a time has to itself. What they record is the job's own: a run record in
``JOB/runs/`` (latency, and the outputs' error against ``reference.npz``, the eager run in the job's dtype) and
a compare in ``JOB/compares/`` (each tap against eager and float64); ``sweeps.show`` reads both for its rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neffbench.numerics.kept import latest_compare
from neffbench.views.run import RunView


def run_points(
    job_dirs: list[Path],
    *,
    runtime: str = "auto",
    iterations: int = 50,
    compare: bool = False,
    depth: int | None = None,
    on_line: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[str]:
    """Run (and compare) each succeeded job in turn; returns one sentence per point that could not be."""
    from neffbench.numerics.compare import Compare, CompareError
    from neffbench.runs.neff_run import NeffRun
    from neffbench.runs.subject import SubjectError, resolve

    say = on_line or (lambda _line: None)
    problems = []
    for job_dir in job_dirs:
        if cancel is not None and cancel.is_set():
            break
        try:
            run = NeffRun(resolve(job_dir), runtime=runtime, iterations=iterations)
        except SubjectError as exc:
            problems.append(f"{job_dir.name}: not run: {exc}")
            continue
        run.start()
        result = run.wait()
        say(f"neffbench: {job_dir.name}: run {result.outcome}" + (f": {result.reason}" if result.reason else ""))
        if compare and not (cancel is not None and cancel.is_set()):
            try:
                done = Compare(job_dir, runtime=runtime, depth=depth).run()
            except CompareError as exc:
                problems.append(f"{job_dir.name}: not compared: {exc}")
                continue
            first = done.document["first_divergent"]["vs_float64"]
            module = next((t["module"] for t in done.document["taps"] if t["name"] == first), None)
            say(f"neffbench: {job_dir.name}: compared; first divergent against float64: {module or 'none'}")
    return problems


def accuracy(job_dir: Path, latest_run: dict[str, Any] | None) -> dict[str, Any] | None:
    """A point's error: its latest timed run's (``latest_run``, as ``runs.history.latest_timed`` finds it) against
    the eager reference, and its latest compare's (the last tap's error against float64, and the first divergent
    taps); None when it was neither run nor compared."""
    out: dict[str, Any] = {}
    numerics = RunView.of(latest_run).numerics if latest_run is not None else None
    if numerics and numerics.get("checked"):
        out["vs_eager"] = numerics.get("max_abs_error")
        out["match"] = numerics.get("match")
    compared = latest_compare(job_dir)
    if compared is not None and compared.document is not None:
        last = (compared.document.get("taps") or [{}])[-1].get("vs_float64") or {}
        out["vs_float64"] = last.get("max_abs")
        out["first_divergent"] = compared.document.get("first_divergent")
        out["compare"] = str(compared.path)
    return out or None
