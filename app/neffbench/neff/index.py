"""Index a workdir's NEFFs: every one below it, read through a cache by (path, size, mtime), with the path of the
nearest job.json (what that record says is read above this package, in views/workdir.py)."""

from __future__ import annotations

import datetime as _dt
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.neff.reader import DEFAULT_LIMITS, Limits, NeffError, NeffInfo, read_neff

JOB_FILE = "job.json"


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
class NeffFile:
    """One NEFF found by a scan: what it says (or why it could not be read) and the nearest job.json's path."""

    path: str  # absolute
    rel_path: str  # relative to the scan root, with forward slashes
    size: int
    mtime: float
    info: NeffInfo | None
    error: str | None = None
    job_path: str | None = None  # the nearest job.json at or below the scan root; what it says is read above

    @property
    def modified(self) -> str:
        return _dt.datetime.fromtimestamp(self.mtime, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Entry:
    key: tuple[int, int]
    value: Any
    error: str | None


@dataclass
class NeffCache:
    """What earlier scans read, keyed by path and valid while (size, mtime) are unchanged; thread-safe."""

    neff_reads: int = 0
    _neffs: dict[tuple[str, bool], _Entry] = field(default_factory=dict)
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

    def forget_missing(self, root: str, seen: set[str]) -> None:
        """Drop entries below ``root`` that the last scan did not see (deleted files)."""
        prefix = root.rstrip(os.sep) + os.sep
        with self._lock:
            for key in [k for k in self._neffs if k[0].startswith(prefix) and k[0] not in seen]:
                del self._neffs[key]


DEFAULT_CACHE = NeffCache()


def walk(root: str) -> list[tuple[str, os.stat_result, str | None]]:
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


def scan_neffs(
    root: str | os.PathLike[str],
    *,
    cache: NeffCache | None = None,
    header_only: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> list[NeffFile]:
    """Every NEFF below ``root``, newest first; unreadable ones have ``error`` set, never raise.

    ``cache`` defaults to one shared by the process, so a rescan of an unchanged tree reads no file again; it
    forgets what is no longer there (the job.json files found are counted as there, for a cache that keeps them).
    Raises ``NotADirectoryError``/``FileNotFoundError`` only for a bad root.
    """
    top = os.path.abspath(root)
    if not os.path.isdir(top):
        if os.path.exists(top):
            raise NotADirectoryError(f"{root} is not a directory")
        raise FileNotFoundError(f"{root} does not exist")
    cache = DEFAULT_CACHE if cache is None else cache
    found: list[NeffFile] = []
    seen: set[str] = set()
    for path, st, job_path in walk(top):
        seen.add(path)
        if job_path:
            seen.add(job_path)
        info, error = cache.neff(path, (st.st_size, st.st_mtime_ns), header_only, limits)
        rel_path = os.path.relpath(path, top).replace(os.sep, "/")
        found.append(NeffFile(path, rel_path, st.st_size, st.st_mtime, info, error, job_path))
    cache.forget_missing(top, seen)
    found.sort(key=lambda r: (-r.mtime, r.rel_path))
    return found
