"""A bug-report bundle's copy of the user's own code: the source closure job.json records, checked by sha256.

A job that ran the user's code (a module job) records every file of theirs its build imported and every data
file it read, each with its sha256 (``sources``; see :mod:`neffbench.usercode.closure`). Those files live outside
the job directory, yet a compiler team cannot rebuild the module without them; so the bundle takes the source
files, and the small data files (configs), when they still hold what the job compiled, and names every file it
leaves out and why.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from neffbench.jobs.summary import human_bytes
from neffbench.views.job import JobView

FOLDER = "sources"
# Data files above this are weights, not configs: listed (with their sha256 in job.json), not copied.
DATA_LIMIT = 1 << 20

Picked = tuple[str, Path, os.stat_result]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _member(entry: dict[str, Any]) -> str:
    """``sources/pkg/model.py`` (the name relative to the closure's root), ``sources/data/config.json``."""
    name = str(entry.get("name") or "")
    parts = PurePosixPath(name.replace(os.sep, "/")).parts
    if entry.get("kind") != "source" or not parts or name.startswith("/") or ".." in parts:
        return f"{FOLDER}/data/{Path(str(entry.get('path') or name)).name}"
    return f"{FOLDER}/{'/'.join(parts)}"


def _why_not(entry: dict[str, Any], path: Path, limit: int) -> tuple[os.stat_result | None, str | None]:
    try:
        st = path.stat()
    except OSError:
        return None, "it is gone from this machine"
    if not stat.S_ISREG(st.st_mode):
        return None, "it is not a regular file"
    if entry.get("kind") != "source" and st.st_size > DATA_LIMIT:
        return None, f"a data file of {human_bytes(st.st_size)} (weights, not a config); its sha256 is in job.json"
    if st.st_size > limit:
        return None, f"over the {human_bytes(limit)} limit"
    try:
        same = _sha256(path) == entry.get("sha256")
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    if not same:
        return None, "it changed since the job compiled it (its sha256 is not job.json's): the copy would mislead"
    return st, None


def plan_sources(job: JobView, limit: int) -> tuple[list[Picked], list[tuple[str, int, str]]]:
    """The closure's files to copy (member name, path, stat) and those left out (path, bytes, why)."""
    block = job.sources or {}
    picked: list[Picked] = []
    left_out: list[tuple[str, int, str]] = []
    seen: set[str] = set()
    for entry in block.get("files") or []:
        if not isinstance(entry, dict) or not entry.get("path"):
            continue
        path = Path(str(entry["path"]))
        st, why = _why_not(entry, path, limit)
        member = _member(entry)
        if member in seen:
            why = f"another file of the closure is already bundled as {member}"
        if st is None or why is not None:
            left_out.append((str(path), int(entry.get("size") or 0), f"your {entry.get('kind', 'source')} file: {why}"))
            continue
        seen.add(member)
        picked.append((member, path.resolve(), st))
    return picked, left_out


def about(rel: str) -> str | None:
    """What a ``sources/`` member is, for the README."""
    if rel.startswith(f"{FOLDER}/data/"):
        return "a data file the build read (a config), as the job read it"
    if rel.startswith(f"{FOLDER}/"):
        return "your source file the build imported, copied unchanged (sha256 as in job.json)"
    return None
