"""Index a workdir: every NEFF below it, paired with the job record that built it, cached by (path, size, mtime)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.neff.reader import DEFAULT_LIMITS, Limits, NeffError, NeffInfo, read_neff

JOB_FILE = "job.json"
_MAX_JOB_BYTES = 4 << 20
# Folders of a job whose NEFFs copy the ones its record lists, by backend (jobs/records.py COPIES, which this
# reader does not import): TorchNeuron's debug directory keeps a copy of each NEFF it puts in its cache.
_COPIES = {"torchneuron": ("debug",)}


class JobRecordError(Exception):
    """A job.json that cannot be used; the message says why in a sentence."""


@dataclass(frozen=True)
class JobRecord:
    """What the compile pipeline wrote about a job; fields it did not write (or wrote wrongly) are None."""

    path: str  # the job.json file
    job_id: str | None
    schema_version: int | None
    outcome: str | None
    reason: str | None
    created: str | None
    backend: str | None
    spec: dict[str, Any]
    spec_hash: str | None
    requested_command: tuple[str, ...] | None
    actual_command: tuple[str, ...] | None
    neffs: tuple[dict[str, Any], ...]
    # The whole document as written (stages, numerics, durations...), for callers that show all of it.
    record: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def directory(self) -> Path:
        return Path(self.path).parent

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "job_id": self.job_id,
            "schema_version": self.schema_version,
            "outcome": self.outcome,
            "reason": self.reason,
            "created": self.created,
            "backend": self.backend,
            "spec": self.spec,
            "spec_hash": self.spec_hash,
            "compiler_command": {
                "requested": None if self.requested_command is None else list(self.requested_command),
                "actual": None if self.actual_command is None else list(self.actual_command),
            },
            "neffs": [dict(n) for n in self.neffs],
        }


def _text(doc: dict[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) else None


def _argv(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return tuple(value)
    return None


def read_job(path: str | os.PathLike[str]) -> JobRecord:
    """Parse a job.json defensively: wrong types become None; only an unreadable file raises ``JobRecordError``."""
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_JOB_BYTES + 1)
    except OSError as exc:
        raise JobRecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > _MAX_JOB_BYTES:
        raise JobRecordError(f"{path} is larger than {_MAX_JOB_BYTES} bytes: not a job record")
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise JobRecordError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise JobRecordError(f"{path} holds a JSON {type(doc).__name__}, not a job record object")
    command: dict[str, Any] = doc["compiler_command"] if isinstance(doc.get("compiler_command"), dict) else {}
    version = doc.get("schema_version")
    neffs: list[Any] = doc["neffs"] if isinstance(doc.get("neffs"), list) else []
    return JobRecord(
        path=str(path),
        job_id=_text(doc, "job_id"),
        schema_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        outcome=_text(doc, "outcome"),
        reason=_text(doc, "reason"),
        created=_text(doc, "created"),
        backend=_text(doc, "backend"),
        spec=doc["spec"] if isinstance(doc.get("spec"), dict) else {},
        spec_hash=_text(doc, "spec_hash"),
        requested_command=_argv(command.get("requested")),
        actual_command=_argv(command.get("actual")),
        neffs=tuple(n for n in neffs if isinstance(n, dict)),
        record=doc,
    )


def find_job(
    neff: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, max_levels: int = 4
) -> Path | None:
    """The nearest job.json in the NEFF's directory or above: up to ``root`` when given, else ``max_levels`` up."""
    directory = Path(neff).resolve().parent
    stop = Path(root).resolve() if root is not None else None
    levels = 0
    while stop is not None or levels < max_levels:
        candidate = directory / JOB_FILE
        if candidate.is_file():
            return candidate
        if directory == stop or directory.parent == directory:
            return None
        directory = directory.parent
        levels += 1
    return None


@dataclass(frozen=True)
class NeffRecord:
    """One NEFF found by a scan: what it says (or why it could not be read) and the job that built it."""

    path: str  # absolute
    rel_path: str  # relative to the scan root, with forward slashes
    size: int
    mtime: float
    info: NeffInfo | None
    error: str | None = None
    job: JobRecord | None = None
    job_path: str | None = None
    job_error: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def modified(self) -> str:
        return _dt.datetime.fromtimestamp(self.mtime, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

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
    value: Any
    error: str | None


@dataclass
class NeffCache:
    """What earlier scans read, keyed by path and valid while (size, mtime) are unchanged; thread-safe."""

    neff_reads: int = 0
    job_reads: int = 0
    _neffs: dict[tuple[str, bool], _Entry] = field(default_factory=dict)
    _jobs: dict[str, _Entry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def neff(
        self, path: str, key: tuple[int, int], header_only: bool, limits: Limits
    ) -> tuple[NeffInfo | None, str | None]:
        with self._lock:
            # A full read answers a header-only request too.
            for mode in (False, True) if header_only else (False,):
                hit = self._neffs.get((path, mode))
                if hit and hit.key == key:
                    return hit.value, hit.error
        try:
            info, error = read_neff(path, header_only=header_only, limits=limits), None
        except NeffError as exc:
            info, error = None, exc.reason
        with self._lock:
            self.neff_reads += 1
            self._neffs[(path, header_only)] = _Entry(key, info, error)
        return info, error

    def job(self, path: str) -> tuple[JobRecord | None, str | None]:
        try:
            st = os.stat(path)
            key = (st.st_size, st.st_mtime_ns)
        except OSError as exc:
            return None, f"cannot read {path}: {exc.strerror or exc}"
        with self._lock:
            hit = self._jobs.get(path)
            if hit and hit.key == key:
                return hit.value, hit.error
        try:
            job, error = read_job(path), None
        except JobRecordError as exc:
            job, error = None, str(exc)
        with self._lock:
            self.job_reads += 1
            self._jobs[path] = _Entry(key, job, error)
        return job, error

    def forget_missing(self, root: str, seen: set[str]) -> None:
        """Drop entries below ``root`` that the last scan did not see (deleted files)."""
        prefix = root.rstrip(os.sep) + os.sep
        with self._lock:
            for key in [k for k in self._neffs if k[0].startswith(prefix) and k[0] not in seen]:
                del self._neffs[key]
            for path in [k for k in self._jobs if k.startswith(prefix) and k not in seen]:
                del self._jobs[path]


DEFAULT_CACHE = NeffCache()


def _walk(root: str) -> list[tuple[str, os.stat_result, str | None]]:
    """Every ``*.neff`` below root with its stat and nearest job.json; symlinked directories are not followed."""
    found: list[tuple[str, os.stat_result, str | None]] = []
    stack: list[tuple[str, str | None]] = [(root, None)]
    while stack:
        directory, inherited = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue  # an unreadable directory hides its NEFFs; the rest of the scan goes on
        names = {e.name for e in entries}
        job = os.path.join(directory, JOB_FILE) if JOB_FILE in names else inherited
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, job))
                elif entry.name.lower().endswith(".neff") and entry.is_file():
                    found.append((entry.path, entry.stat(), job))
            except OSError:
                continue  # vanished or a dangling link between listing and stat
    return found


def scan_workdir(
    root: str | os.PathLike[str],
    *,
    cache: NeffCache | None = None,
    header_only: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> list[NeffRecord]:
    """Every NEFF below ``root``, newest first; unreadable ones are records with ``error`` set, never exceptions.

    ``cache`` defaults to one shared by the process, so a rescan of an unchanged tree reads no file again.
    Raises ``NotADirectoryError``/``FileNotFoundError`` only for a bad root.
    """
    top = os.path.abspath(root)
    if not os.path.isdir(top):
        if os.path.exists(top):
            raise NotADirectoryError(f"{root} is not a directory")
        raise FileNotFoundError(f"{root} does not exist")
    cache = DEFAULT_CACHE if cache is None else cache
    records: list[NeffRecord] = []
    seen: set[str] = set()
    for path, st, job_path in _walk(top):
        seen.add(path)
        info, error = cache.neff(path, (st.st_size, st.st_mtime_ns), header_only, limits)
        job = job_error = None
        warnings: list[str] = []
        if job_path:
            seen.add(job_path)
            job, job_error = cache.job(job_path)
        if job and _is_copy(path, job):
            continue
        if job and info and info.sha256:
            warnings.extend(_check_against_job(path, info, job))
        records.append(
            NeffRecord(
                path=path,
                rel_path=os.path.relpath(path, top).replace(os.sep, "/"),
                size=st.st_size,
                mtime=st.st_mtime,
                info=info,
                error=error,
                job=job,
                job_path=job_path,
                job_error=job_error,
                warnings=tuple(warnings),
            )
        )
    cache.forget_missing(top, seen)
    records.sort(key=lambda r: (-r.mtime, r.rel_path))
    return records


def _is_copy(path: str, job: JobRecord) -> bool:
    skip = _COPIES.get(job.backend or "", ())
    if not skip:
        return False
    rel = Path(os.path.relpath(path, job.directory)).parts
    return bool(rel) and rel[0] in skip


def _check_against_job(path: str, info: NeffInfo, job: JobRecord) -> list[str]:
    """A NEFF rewritten after its job finished no longer matches the flags recorded for it: say so."""
    for entry in job.neffs:
        rel = entry.get("path")
        if isinstance(rel, str) and os.path.normpath(os.path.join(job.directory, rel)) == os.path.normpath(path):
            recorded = entry.get("sha256")
            if isinstance(recorded, str) and recorded.lower() != info.sha256:
                return [f"the file changed after job {job.job_id or job.path} recorded it (sha256 differs)"]
    return []
