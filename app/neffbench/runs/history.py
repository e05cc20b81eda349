"""Runs already made: a target's run records, and the same compile's other buckets with their latest runs.

Qt-free and cheap (JSON reads only), for the CLI and the window's Run view (called off the GUI thread).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neffbench.procs import process_alive, remove_stale_temporaries
from neffbench.procs import write_json as write_json_atomic
from neffbench.views.clock import iso
from neffbench.views.fields import RecordError
from neffbench.views.job import JobView
from neffbench.views.run import RunView


def mark_interrupted(runs_dir: str | Path) -> list[Path]:
    """Run records left ``running`` by a process that is gone (pid and start time) become ``interrupted``."""
    import platform

    folder = Path(runs_dir)
    if not folder.is_dir():
        return []
    remove_stale_temporaries(folder)
    marked = []
    for path in sorted(folder.glob("*.json")):
        try:
            text = path.read_text(encoding="utf-8")
            if '"running"' not in text:
                continue
            record = json.loads(text)
            run = RunView.of(record, str(path))  # a newer schema's record is not ours to rewrite
        except (OSError, ValueError):
            continue
        if run.outcome != "running" or run.host != platform.node() or process_alive(run.pid, run.pid_start):
            continue
        record["outcome"] = "interrupted"
        record["reason"] = (
            f"the process that ran it (pid {run.pid}) ended before it finished, during {run.stage or 'start'}"
        )
        record["finished"] = iso()
        try:
            write_json_atomic(path, record)
        except OSError:
            continue
        marked.append(path)
    return marked


def runs(runs_dir: str | Path) -> list[dict[str, Any]]:
    """Every run record in a runs directory, oldest first, each with its ``path``; runs whose process is gone
    are marked interrupted first. Unreadable ones are left out, and so are those of a newer schema (RunView
    refuses them), whose fields this version could misread."""
    mark_interrupted(runs_dir)
    out = []
    for path in sorted(Path(runs_dir).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            RunView.of(record, str(path))
        except (OSError, ValueError):  # RecordError is a ValueError
            continue
        out.append({**record, "path": str(path)})
    return out


def latest_timed(records: list[dict[str, Any]], runtime: str | None = None) -> dict[str, Any] | None:
    """The latest succeeded run with timings (of ``runtime``, when given), or None."""
    done = [
        r
        for r in records
        if RunView.of(r).succeeded_with_timings and (runtime is None or RunView.of(r).runtime == runtime)
    ]
    return max(done, key=lambda r: RunView.of(r).started or "") if done else None


def _spec(record: dict[str, Any]) -> Any:
    from neffbench.spec import SpecError, from_dict

    try:
        return from_dict(JobView.of(record).spec or {})
    except SpecError:
        return None


def siblings(job_dir: str | Path) -> list[tuple[dict[str, Any], Path]]:
    """This job and the jobs of the same spec but another bucket in its workdir, by bucket.

    Two jobs are of one compile's buckets when moving one to the other's bucket gives the other's
    spec: everything but the bucket is the same.
    """
    from neffbench.kernels import registry

    job_dir = Path(job_dir)
    try:
        mine = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
        JobView.of(mine, str(job_dir / "job.json"))
    except (OSError, ValueError):  # RecordError is a ValueError
        return []
    spec = _spec(mine)
    if spec is None:
        return [(mine, job_dir)]
    kernel = registry.for_spec(spec)
    found: dict[str, tuple[dict[str, Any], Path]] = {}
    for path in sorted(job_dir.parent.glob("*/job.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        try:
            job = JobView.of(record, str(path))
        except RecordError:
            continue
        other = _spec(record)
        bucket = job.bucket
        if other is None or type(other) is not type(spec) or not bucket:
            continue
        try:
            same = kernel.for_bucket(spec, bucket) == other
        except (KeyError, TypeError):
            same = False
        if same:
            key = json.dumps(bucket, sort_keys=True)
            # The newest job of each bucket, as a user re-compiling would expect.
            if key not in found or (job.created or "") > (JobView.of(found[key][0]).created or ""):
                found[key] = (record, path.parent)
    return sorted(found.values(), key=lambda rp: kernel_items(kernel, rp[0]))


def kernel_items(kernel: Any, record: dict[str, Any]) -> int:
    return kernel.items_per_call(JobView.of(record).bucket)


def bucket_curve(job_dir: str | Path, runtime: str | None = None) -> list[dict[str, Any]]:
    """Per bucket of this job's compile: its latest succeeded run (of ``runtime``, when given).

    Rows ``{bucket, items_per_call, job_dir, run}``, ``run`` None where that bucket has no run yet.
    """
    rows = []
    for record, path in siblings(job_dir):
        latest = latest_timed(runs(path / "runs"), runtime)
        rows.append(
            {
                "bucket": JobView.of(record).bucket,
                "items_per_call": RunView.of(latest).items_per_call if latest else None,
                "job_dir": str(path),
                "run": latest,
            }
        )
    return rows
