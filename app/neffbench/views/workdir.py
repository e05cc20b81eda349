"""A workdir's NEFFs paired with the job records that built them: neff/index.py finds and reads the NEFFs, this
reads each job.json (through its view, cached by size and mtime), skips the copies a backend keeps of its NEFFs
and says when a NEFF no longer is the file its job recorded."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from neffbench.neff.index import NeffCache, NeffFile, scan_neffs
from neffbench.neff.reader import DEFAULT_LIMITS, Limits, NeffInfo
from neffbench.views import job_file
from neffbench.views.fields import RecordError
from neffbench.views.job import JobView

__all__ = ["DEFAULT_CACHE", "NeffRecord", "WorkdirCache", "scan_workdir"]


@dataclass(frozen=True)
class NeffRecord(NeffFile):
    """One NEFF found by a scan, with the job that built it (or why its job.json could not be read)."""

    job: JobView | None = None
    job_error: str | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        info = self.info
        job = self.job
        return {
            "path": self.rel_path,
            "abs_path": self.path,
            "size": self.size,
            "modified": self.modified,
            "name": info.header.name if info else None,
            "compiler_version": info.compiler_version if info else None,
            "target": info.target if info else None,
            "lnc_size": info.header.lnc_size if info else None,
            "sha256": info.sha256 if info else None,
            "inputs": [t.to_dict() for t in info.inputs] if info else [],
            "outputs": [t.to_dict() for t in info.outputs] if info else [],
            "io": info.io_summary() if info else "",
            "job": None
            if job is None
            else {
                "path": job.path,
                "job_id": job.job_id,
                "outcome": job.outcome,
                "reason": job.reason,
                "created": job.created,
                "backend": job.backend,
                "spec_hash": job.spec_hash,
            },
            "job_path": self.job_path,
            "job_error": self.job_error,
            "error": self.error,
            "warnings": list(self.warnings),
        }


@dataclass
class _Entry:
    key: tuple[int, int]
    job: JobView | None
    error: str | None


@dataclass
class WorkdirCache(NeffCache):
    """The NEFF cache, and the job records read beside it, keyed by path while (size, mtime) are unchanged."""

    job_reads: int = 0
    _jobs: dict[str, _Entry] = field(default_factory=dict)

    def job(self, path: str) -> tuple[JobView | None, str | None]:
        try:
            st = os.stat(path)
            key = (st.st_size, st.st_mtime_ns)
        except OSError as exc:
            return None, f"cannot read {path}: {exc.strerror or exc}"
        with self._lock:
            hit = self._jobs.get(path)
            if hit and hit.key == key:
                return hit.job, hit.error
        try:
            job, error = job_file.read_job(path), None
        except RecordError as exc:
            job, error = None, str(exc)
        with self._lock:
            self.job_reads += 1
            self._jobs[path] = _Entry(key, job, error)
        return job, error

    def forget_missing(self, root: str, seen: set[str]) -> None:
        super().forget_missing(root, seen)
        prefix = root.rstrip(os.sep) + os.sep
        with self._lock:
            for path in [k for k in self._jobs if k.startswith(prefix) and k not in seen]:
                del self._jobs[path]


DEFAULT_CACHE = WorkdirCache()


def scan_workdir(
    root: str | os.PathLike[str],
    *,
    cache: WorkdirCache | None = None,
    header_only: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> list[NeffRecord]:
    """Every NEFF below ``root``, newest first; unreadable ones are records with ``error`` set, never exceptions.

    ``cache`` defaults to one shared by the process, so a rescan of an unchanged tree reads no file again.
    Raises ``NotADirectoryError``/``FileNotFoundError`` only for a bad root.
    """
    cache = DEFAULT_CACHE if cache is None else cache
    records: list[NeffRecord] = []
    for found in scan_neffs(root, cache=cache, header_only=header_only, limits=limits):
        job, job_error = cache.job(found.job_path) if found.job_path else (None, None)
        if job and _is_copy(found.path, job):
            continue
        warnings = _check_against_job(found.path, found.info, job) if job and found.info and found.info.sha256 else []
        as_found = {f.name: getattr(found, f.name) for f in fields(NeffFile)}
        records.append(NeffRecord(**as_found, job=job, job_error=job_error, warnings=tuple(warnings)))
    return records


def _is_copy(path: str, job: JobView) -> bool:
    """Whether the NEFF is one its job's backend keeps a copy of elsewhere in the job (listed once, not twice)."""
    cls = job.backend_class
    skip = cls.neff_copies if cls is not None else ()
    if not skip or job.directory is None:
        return False
    rel = Path(os.path.relpath(path, job.directory)).parts
    return bool(rel) and rel[0] in skip


def _check_against_job(path: str, info: NeffInfo, job: JobView) -> list[str]:
    """A NEFF rewritten after its job finished no longer matches the flags recorded for it: say so."""
    if job.directory is None:
        return []
    for entry in job.neffs:
        rel = entry.get("path")
        if isinstance(rel, str) and os.path.normpath(os.path.join(job.directory, rel)) == os.path.normpath(path):
            recorded = entry.get("sha256")
            if isinstance(recorded, str) and recorded.lower() != info.sha256:
                return [f"the file changed after job {job.job_id or job.path} recorded it (sha256 differs)"]
    return []
