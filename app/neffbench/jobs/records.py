"""Job records: one directory per compile, and its ``job.json`` written atomically at every change.

A job directory ``<workdir>/<name>-<UTC timestamp>-<spec hash 8>/`` holds ``spec.toml``, ``job.json``,
``job.log`` (the merged log as it streamed), ``events.jsonl`` (every protocol event), ``reproduce.py``,
``model.pt`` and ``compiler/`` (the compiler workdir with the HLO, its log and the NEFFs; a torchneuron
job has the compiler's log there, its NEFFs in ``neff_cache/``, ``debug/`` and ``torchneuron.log``). Only the
parent process (the runner) writes ``job.json``, so there is never a second writer to race.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import platform
import signal
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from neffbench.backends import registry as backends
from neffbench.backends.cpu_check import CpuCheck
from neffbench.kernels import registry
from neffbench.procs import process_alive, process_start_time, remove_stale_temporaries
from neffbench.procs import write_json as write_json_atomic
from neffbench.spec import spec_hash
from neffbench.views.clock import iso, utc_now  # noqa: F401 - records' API
from neffbench.views.job import (
    JobView,
    bucket_of,  # noqa: F401 - records' API
)

log = logging.getLogger(__name__)

RECORD_NAME = "job.json"
OUTCOMES = ("running", "succeeded", "failed", "cancelled", "interrupted")
FINAL_OUTCOMES = OUTCOMES[1:]
NO_NEFF_NOTE = CpuCheck.neff_note


def job_dir_name(spec: Any, when: _dt.datetime | None = None, sources: str | None = None) -> str:
    return f"{spec.name}-{(when or utc_now()).strftime('%Y%m%dT%H%M%SZ')}-{spec_hash(spec, sources)[:8]}"


def create_job_dir(
    workdir: str | Path, spec: Any, when: _dt.datetime | None = None, sources: str | None = None
) -> Path:
    """A new, empty job directory; ``mkdir`` is the lock, so two compiles never share one."""
    root = Path(workdir)
    root.mkdir(parents=True, exist_ok=True)
    base = job_dir_name(spec, when, sources)
    for n in range(1000):
        path = root / (base if n == 0 else f"{base}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"could not create a fresh job directory for {base} in {root}")


class WorkdirError(OSError):
    """A workdir (or a job directory in it) that cannot be created or written; one sentence with path and cause."""


def cannot_write(path: Path, exc: OSError) -> str:
    cause = exc.strerror or str(exc)
    return f"cannot write {path}: {cause}"


def unusable_workdir(workdir: str | Path) -> str | None:
    """Why ``workdir`` cannot be a workdir (a file, a folder under a file, one that cannot be written), or None;
    nothing is created, so it can be asked as the path is typed."""
    root = Path(workdir).expanduser().absolute()
    if root.exists():
        if not root.is_dir():
            return f"{root} is a file, not a folder"
        return None if os.access(root, os.W_OK | os.X_OK) else f"{root} cannot be written"
    parent = root.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{root} cannot be created: {parent} is a file"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{root} cannot be created: {parent} cannot be written"
    return None


def prepare_workdir(workdir: str | Path) -> Path:
    """The workdir, created if need be and proven writable, or WorkdirError saying why not."""
    root = Path(workdir).expanduser()
    if root.exists() and not root.is_dir():
        raise WorkdirError(f"the workdir {root} is not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkdirError(f"the workdir {root} cannot be created: {exc.strerror or exc}") from None
    if not root.is_dir():
        raise WorkdirError(f"the workdir {root} is not a folder")
    probe = root / f".neffbench-write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"ok")
    except OSError as exc:
        raise WorkdirError(f"the workdir {root} cannot be written: {exc.strerror or exc}") from None
    finally:
        try:
            probe.unlink()
        except OSError:
            pass
    return root


def write_record(job_dir: Path, record: dict[str, Any]) -> None:
    """Replace ``job.json`` in one step (see :func:`write_json_atomic`)."""
    write_json_atomic(Path(job_dir) / RECORD_NAME, record)


def read_record(job_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(job_dir) / RECORD_NAME).read_text(encoding="utf-8"))


def records_mentioning(workdir: str | Path, text: str | Collection[str]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(job directory, record) of every readable job.json in the workdir whose text holds ``text`` (a key or a
    digest; or any of several): most records are of other keys, and are skipped without being parsed."""
    texts = (text,) if isinstance(text, str) else tuple(text)
    for path in Path(workdir).glob(f"*/{RECORD_NAME}"):
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if not any(t in raw for t in texts):
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield path.parent, record


def file_entry(job_dir: Path, path: Path) -> dict[str, Any]:
    """Path (relative to the job), size and sha256 of one file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"path": path.relative_to(job_dir).as_posix(), "size": path.stat().st_size, "sha256": digest.hexdigest()}


def neff_entries(job_dir: Path, backend: str | None = None) -> list[dict[str, Any]]:
    """Every NEFF under the job, wherever the compiler put it and whatever it called it (never the copies)."""
    cls = backends.recorded(backend)
    skip = cls.neff_copies if cls else ()
    return [
        file_entry(job_dir, p)
        for p in sorted(Path(job_dir).glob("**/*.neff"))
        if p.is_file() and p.relative_to(job_dir).parts[0] not in skip
    ]


def _stop_leftovers(worker_pid: int | None, worker_start: str | None) -> bool:
    """SIGKILL what is left of an orphaned job's process group (the worker leads it).

    Only when the group id is still the job's: the worker itself (alive or a zombie) has its recorded
    start time, or no process has its pid (so no newer process can lead a group of that id).
    """
    if not worker_pid:
        return False
    start = process_start_time(worker_pid)
    if start is not None and start != worker_start:
        return False
    try:
        os.killpg(worker_pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def mark_interrupted(workdir: str | Path) -> list[Path]:
    """Mark jobs left ``running`` by a process that is gone as ``interrupted``; returns their directories.

    Records from another host are left alone: their process cannot be checked from here.
    """
    root = Path(workdir)
    if not root.is_dir():
        return []
    marked = []
    host = platform.node()
    for job_dir in [p for p in root.iterdir() if p.is_dir()]:
        remove_stale_temporaries(job_dir)
        if (job_dir / "runs").is_dir():  # a run killed while writing its record leaves one there
            remove_stale_temporaries(job_dir / "runs")
    for path in sorted(root.glob(f"*/{RECORD_NAME}")):
        try:
            text = path.read_text(encoding="utf-8")
            if '"running"' not in text:  # most records are final: skip parsing them
                continue
            record = json.loads(text)
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or record.get("outcome") != "running" or record.get("host") != host:
            continue
        if process_alive(record.get("pid"), record.get("pid_start")):
            continue
        job_dir = path.parent
        stage = record.get("stage") or "start"
        record["outcome"] = "interrupted"
        record["reason"] = (
            f"the process that ran this job (pid {record.get('pid')}) ended before finishing it; "
            f"it got as far as stage '{stage}'"
        )
        if _stop_leftovers(record.get("worker_pid"), record.get("worker_pid_start")):
            record["reason"] += "; the job's remaining processes were stopped"
        record["finished"] = iso()
        try:
            record["neffs"] = neff_entries(job_dir, record.get("backend"))
        except OSError:
            pass
        write_record(job_dir, record)
        log.info("marked %s interrupted", job_dir)
        marked.append(job_dir)
    return marked


def last_duration(workdir: str | Path, spec: Any, backend: str | None) -> float | None:
    """How long the newest succeeded job of the spec's first bucket (and backend) took to compile, or None.

    A job served from the cache is no such time (it took a moment because nothing was compiled), so it is
    skipped. Reads every job record in the workdir: call it off the GUI thread.
    """
    kernel = registry.for_spec(spec)
    wanted = spec_hash(kernel.for_bucket(spec, kernel.buckets(spec)[0]))
    best: tuple[str, float] | None = None
    for record_path in Path(workdir).glob("*/job.json"):
        try:
            job = JobView.of(json.loads(record_path.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # RecordError is a ValueError: a newer neffbench's, or not a record
            continue
        if (
            job.spec_hash != wanted
            or job.outcome != "succeeded"
            or (backend and job.backend != backend)
            or job.cache_hit
        ):
            continue
        created = job.created or ""
        if job.duration_s is not None and (best is None or created > best[0]):
            best = (created, job.duration_s)
    return None if best is None else best[1]
