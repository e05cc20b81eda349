"""The buckets of a compile with no run yet: what "Run the missing buckets" runs, in the window and in
``neffbench run --missing-buckets``.

Qt-free and cheap (JSON reads only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.runs.history import bucket_curve, runs
from neffbench.runs.subject import RUNS_DIR
from neffbench.views.run import RunView
from neffbench.words import plural


def curve_runtime(records: list[dict[str, Any]]) -> str | None:
    """The runtime of a target's latest succeeded run: its bucket curve's, since CPU and device points never share a
    curve. None when none succeeded."""
    done = [v for v in map(RunView.of, records) if v.outcome == "succeeded" and v.runtime]
    return max(done, key=lambda v: v.started or "").runtime if done else None


def not_run(curve: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of ``history.bucket_curve`` whose bucket has no run yet."""
    return [row for row in curve if not row.get("run")]


def missing_buckets(job_dir: str | Path, runtime: str | None = None) -> tuple[str | None, list[dict[str, Any]]]:
    """(the curve's runtime, the rows of the buckets of ``job_dir``'s compile with no run of it yet). Without
    ``runtime``, the curve is the runtime's this job last ran on with success, or any runtime's when it has none."""
    runtime = runtime or curve_runtime(runs(Path(job_dir) / RUNS_DIR))
    return runtime, not_run(bucket_curve(job_dir, runtime))


def ended_text(total: int, left: int, outcome: str) -> str:
    """What a run of the missing buckets says when it has ended: all ran, or which run stopped the rest."""
    if outcome == "succeeded":
        return f"Ran the {plural(total, 'missing bucket')}: the bucket curve is complete."
    were = "was" if left == 1 else "were"
    return f"The missing buckets stopped: that run {outcome}, so {plural(left, 'bucket')} {were} not run."
