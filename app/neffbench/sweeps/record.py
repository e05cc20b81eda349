"""A sweep's record: its id and ``<workdir>/sweeps/<id>/sweep.json``, rewritten atomically at every change of a point.

The file is always whole (a temporary file, flushed, renamed, as ``job.json`` is), so a sweep killed at
any moment leaves a readable record; whoever reads it next marks a sweep whose process is gone as
``interrupted``. Each point names its job by directory name (``job_id``, a folder of the workdir), so a
moved workdir keeps its sweeps; the job's own ``job.json`` stays the authority on the job.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import platform
import sys
import threading
from pathlib import Path
from typing import Any

from neffbench.jobs import records
from neffbench.spec import kernel_of, spec_hash, to_dict
from neffbench.views.job import JobView
from neffbench.views.sweep import SCHEMA_VERSION, SweepView

FOLDER = "sweeps"
RECORD_NAME = "sweep.json"
# A point is invalid (never run), pending, waiting (for memory), running, or one of a job's outcomes.
POINT_STATES = ("invalid", "pending", "waiting", "running", "succeeded", "failed", "cancelled", "interrupted")
FINAL_STATES = frozenset({"invalid", "succeeded", "failed", "cancelled", "interrupted"})


class SweepNotFound(LookupError):
    """No sweep of that id (or path) in the workdir; the message lists what there is."""


def sweep_dir(workdir: str | Path, sweep_id: str) -> Path:
    return Path(workdir) / FOLDER / sweep_id


def new_id(plan: Any, when: Any = None) -> str:
    """``<name>-<UTC time>-<8 hex of the base spec and the grid>``, as job directories are named."""
    grid = json.dumps([[a.field, list(map(str, a.values))] for a in plan.axes] + [plan.zip], sort_keys=True)
    digest = hashlib.sha256((spec_hash(plan.base) + grid).encode()).hexdigest()[:8]
    return f"{plan.base.name}-{(when or records.utc_now()).strftime('%Y%m%dT%H%M%SZ')}-{digest}"


def _point(plan: Any, p: Any) -> dict[str, Any]:
    return {
        "index": p.index,
        "values": p.values,
        "bucket": p.bucket,
        "label": p.label(plan.short_names),
        "state": "pending" if p.valid else "invalid",
        "problems": [{"field": q.field, "message": q.message, "severity": q.severity} for q in p.problems],
        "spec_hash": spec_hash(p.spec) if p.spec is not None else None,
        "memory_bytes": p.memory.bytes if p.memory else None,
        "memory_source": p.memory.source if p.memory else None,
        "job_id": None,
        "cached": False,
        "dispatched": False,
        "node": None,
        "attempts": 0,
        "lost_attempts": [],
        "reason": "; ".join(str(q) for q in p.errors) or None,
        "started": None,
        "finished": None,
        "duration_s": None,
        "peak_rss_bytes": None,
    }


def initial(plan: Any, sweep_id: str, workdir: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The record of a sweep about to start: every point pending (or invalid, with its problems)."""
    from neffbench.sweeps.versions import tool_versions

    pid = os.getpid()
    return {
        "schema_version": SCHEMA_VERSION,
        "sweep_id": sweep_id,
        "name": plan.base.name,
        "kernel": kernel_of(plan.base),
        "state": "running",
        "reason": None,
        "created": records.iso(),
        "finished": None,
        "spec": to_dict(plan.base),
        "axes": [{"field": a.field, "values": list(a.values), "texts": list(a.texts)} for a in plan.axes],
        "short_names": plan.short_names,
        "zip": plan.zip,
        "settings": settings,
        "workdir": str(workdir),
        "host": platform.node(),
        "pid": pid,
        "pid_start": records.process_start_time(pid),
        "argv": list(sys.argv),
        "versions": tool_versions(),
        "nodes": {},
        "counts": {},
        "points": [_point(plan, p) for p in plan.points],
    }


def counts(data: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in data.get("points") or []:
        out[p["state"]] = out.get(p["state"], 0) + 1
    return out


class SweepRecord:
    """``sweep.json`` of a running sweep: changed under a lock from any thread, and written whole each time."""

    def __init__(self, path: Path, data: dict[str, Any]):
        self.path = Path(path)
        self._data = data
        self._lock = threading.Lock()

    @classmethod
    def create(cls, workdir: Path, plan: Any, settings: dict[str, Any]) -> SweepRecord:
        base = new_id(plan)
        root = Path(workdir) / FOLDER
        root.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            sweep_id = base if n == 0 else f"{base}-{n}"
            try:
                (root / sweep_id).mkdir()  # the lock: two sweeps never share an id
            except FileExistsError:
                continue
            record = cls(root / sweep_id / RECORD_NAME, initial(plan, sweep_id, Path(workdir).resolve(), settings))
            record.write()
            return record
        raise FileExistsError(f"could not create a fresh sweep folder for {base} in {root}")

    @property
    def sweep_id(self) -> str:
        return self._data["sweep_id"]

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._data)

    def point(self, index: int) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._data["points"][index])

    def update_point(self, index: int, **changes: Any) -> dict[str, Any]:
        with self._lock:
            point = self._data["points"][index]
            point.update(changes)
            self._data["counts"] = counts(self._data)
            self._write_locked()
            return copy.deepcopy(point)

    def update(self, **changes: Any) -> None:
        with self._lock:
            self._data.update(changes)
            self._data["counts"] = counts(self._data)
            self._write_locked()

    def write(self) -> None:
        with self._lock:
            self._data["counts"] = counts(self._data)
            self._write_locked()

    def _write_locked(self) -> None:
        try:
            records.write_json_atomic(self.path, self._data)
        except OSError as exc:
            # The sweep goes on (each job keeps its own record); the last whole sweep.json stays.
            import logging

            logging.getLogger(__name__).warning("%s", records.cannot_write(self.path, exc))


def _is_stale(view: SweepView) -> bool:
    return (
        view.state == "running" and view.host == platform.node() and not records.process_alive(view.pid, view.pid_start)
    )


def _mark_stale(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """A sweep left running by a process that is gone: its unfinished points say what became of them."""
    workdir = path.parent.parent.parent
    try:
        records.mark_interrupted(workdir)
    except OSError:
        pass
    for point in data.get("points") or []:
        if point["state"] in FINAL_STATES:
            continue
        job = _job_record(workdir, point)
        if job is not None and job.outcome in records.FINAL_OUTCOMES:
            point["state"], point["reason"] = job.outcome, job.reason
        else:
            point["state"] = "interrupted"
            point["reason"] = "the sweep's process ended before this point finished"
    data["state"] = "interrupted"
    data["reason"] = f"the process that ran this sweep (pid {data.get('pid')}) ended before it finished"
    data["finished"] = records.iso()
    data["counts"] = counts(data)
    try:
        records.write_json_atomic(path, data)
    except OSError:
        pass  # a read-only workdir is still readable
    return data


def _job_record(workdir: Path, point: dict[str, Any]) -> JobView | None:
    if not point.get("job_id"):
        return None
    try:
        return JobView.of(records.read_record(Path(workdir) / point["job_id"]))
    except (OSError, ValueError):  # RecordError is a ValueError
        return None


def resolve(ref: str | Path, workdir: str | Path | None = None) -> Path:
    """The ``sweep.json`` that ``ref`` names: a sweep id (or its unique start) in the workdir, its folder, or the file."""
    path = Path(ref)
    if path.is_file():
        return path
    if (path / RECORD_NAME).is_file():
        return path / RECORD_NAME
    root = Path(workdir or "neffbench-workdir") / FOLDER
    exact = root / str(ref) / RECORD_NAME
    if exact.is_file():
        return exact
    known = sorted(p.parent.name for p in root.glob(f"*/{RECORD_NAME}"))
    matches = [k for k in known if k.startswith(str(ref))]
    if len(matches) == 1:
        return root / matches[0] / RECORD_NAME
    if matches:
        raise SweepNotFound(f"'{ref}' names {len(matches)} sweeps in {root}: {', '.join(matches)}")
    listed = f" Sweeps there: {', '.join(known[-5:])}." if known else " There is no sweep there yet."
    raise SweepNotFound(f"no sweep '{ref}' in {root.parent} (give --workdir, or the sweep.json path).{listed}")


def load(workdir: str | Path | None, sweep_id: str | Path) -> dict[str, Any]:
    """The sweep's record (with ``path``), its stale state fixed first; SweepNotFound or ValueError if unreadable."""
    path = resolve(sweep_id, workdir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read: {exc}") from None
    if not isinstance(data, dict) or "points" not in data:
        raise ValueError(f"{path} is not a sweep record")
    if _is_stale(SweepView.of(data, str(path))):  # RecordError (a ValueError) for a newer schema's sweep
        data = _mark_stale(path, data)
    return {**data, "path": str(path)}


def list_sweeps(workdir: str | Path) -> list[dict[str, Any]]:
    """Every sweep in the workdir, newest first (unreadable records left out)."""
    out = []
    for path in Path(workdir, FOLDER).glob(f"*/{RECORD_NAME}"):
        try:
            out.append(load(None, path))
        except (ValueError, SweepNotFound):
            continue
    return sorted(out, key=lambda d: SweepView.of(d).created or "", reverse=True)
