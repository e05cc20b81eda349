"""A build's source closure as records hold it: every file of the user's own code it imported and every data file
it read, each with its sha256, and the versions of the distributions its code came from.

The closure is found by watching a build (``usercode.recorder``, in a child process); this module, which imports
neither torch nor the user's code, turns it into a record, a digest for the spec hash and the cache key, and
checks whether a recorded closure is still what the files on disk hold. That check is what lets a compile
reuse the closure an earlier build found (as ccache's direct mode reuses its include list) and still miss the
cache as soon as any file the module was built from has changed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neffbench import installed
from neffbench.procs import write_text

# Data files above this size are trusted by size and modification time when the record is checked again
# (a checkpoint of many GB would otherwise be read in full by every compile); their sha256 is taken once.
STAT_TRUSTED_BYTES = 64 << 20
_SKIP_DISTRIBUTIONS = {"neffbench", "torch"}  # the workbench itself; torch's version is in every key already


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _common_root(paths: list[str]) -> str | None:
    folders = [os.path.dirname(p) for p in paths]
    if not folders:
        return None
    return os.path.commonpath(folders)


def _entry(path: str, kind: str, root: str | None) -> dict[str, Any]:
    st = os.stat(path)
    name = os.path.relpath(path, root) if kind == "source" and root else path
    return {
        "path": path,
        "name": name,
        "kind": kind,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "sha256": _sha256_of(path, st),
    }


def _hash_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "neffbench" / "checkpoint-sha256.json"


def _sha256_of(path: str, st: os.stat_result) -> str:
    """A file's sha256; a large checkpoint's is taken once for its size and modification time and remembered
    (as git's index does), so the probe and each job that read a checkpoint of many GB do not read it again."""
    if st.st_size <= STAT_TRUSTED_BYTES:
        return file_sha256(path)
    key = f"{path}:{st.st_size}:{st.st_mtime_ns}"
    cache_path = _hash_cache_path()
    try:
        known = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and isinstance(known.get(key), str):
        return str(known[key])
    digest = file_sha256(path)
    try:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        fresh = {k: v for k, v in (known if isinstance(known, dict) else {}).items() if not k.startswith(f"{path}:")}
        write_text(cache_path, json.dumps({**fresh, key: digest}), fsync=False)  # a cache: losing it costs a hash
    except OSError:
        pass  # remembering is a saving, not a need
    return digest


def record(code: list[str], data: list[str], distributions: dict[str, str]) -> dict[str, Any]:
    """The ``sources`` block of a job record: ``files`` (the user's source files, then data files), their
    ``root`` (source names are relative to it, so a moved project has the same digest), ``distributions``,
    ``import_path`` (the folders outside this environment some of them were found in: reached through the build's
    own import path, which a rebuild looks in again) and ``digest``."""
    root = _common_root(code)
    files = [_entry(p, "source", root) for p in code] + [_entry(p, "data", root) for p in data]
    out = {
        "root": root,
        "files": files,
        "distributions": dict(sorted(distributions.items())),
        "import_path": _folders_outside(distributions),
    }
    out["digest"] = digest(out)  # the versions count, not where they lie
    return out


def _folders_outside(distributions: Iterable[str]) -> list[str]:
    """The folders these installed distributions lie in that are not this environment's own site-packages."""
    from neffbench.usercode.origin import is_environment_folder

    found: list[str] = []
    for dist in distributions:
        try:
            folder = os.path.realpath(str(md.distribution(dist).locate_file("")))
        except md.PackageNotFoundError:
            continue
        if folder not in found and not is_environment_folder(folder):
            found.append(folder)
    return found


def digest(block: dict[str, Any]) -> str:
    """What the spec hash and the cache key take from a closure: names, kinds and contents, and versions."""
    parts = sorted((f["kind"], f["name"], f["sha256"]) for f in block.get("files") or [])
    text = json.dumps({"files": parts, "distributions": block.get("distributions") or {}}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def distributions_of(top_levels: Iterable[str]) -> dict[str, str]:
    """{distribution: version} for the installed distributions that provide these top-level packages."""
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    out: dict[str, str] = {}
    for name in top_levels:
        if not name or name in stdlib or name.startswith("_") or name == "builtins":
            continue
        for dist in installed.packages_distributions().get(name, []):
            if dist.lower() in _SKIP_DISTRIBUTIONS:
                continue
            try:
                out[dist] = md.version(dist)
            except md.PackageNotFoundError:
                continue
    return out


def changes(block: dict[str, Any]) -> list[str]:
    """What no longer holds of a recorded closure, one phrase each (``model.py changed``); empty: it is current."""
    found: list[str] = []
    for f in block.get("files") or []:
        path = f.get("path") or ""
        try:
            st = os.stat(path)
        except OSError:
            found.append(f"{f.get('name') or path} is gone")
            continue
        trusted = (
            f.get("kind") == "data"
            and st.st_size > STAT_TRUSTED_BYTES
            and st.st_size == f.get("size")
            and st.st_mtime_ns == f.get("mtime_ns")
        )
        if not trusted and (st.st_size != f.get("size") or file_sha256(path) != f.get("sha256")):
            found.append(f"{f.get('name') or path} changed")
    # Where the build found them: a distribution reached through the spec's import path is not on this sys.path.
    path = [*(block.get("import_path") or ()), *sys.path]
    for dist, version in (block.get("distributions") or {}).items():
        there = next(iter(md.distributions(name=dist, path=path)), None)
        now = there.version if there is not None else None
        if now != version:
            found.append(f"{dist} is {now or 'not installed'} (was {version})")
    return found


def summary(block: dict[str, Any] | None) -> str:
    """``3 source files, 1 data file, transformers 4.57.6``: the closure in one phrase."""
    if not block:
        return "not recorded"
    files = block.get("files") or []
    n_src = sum(f.get("kind") == "source" for f in files)
    n_data = len(files) - n_src
    parts = [f"{n_src} source file{'s' if n_src != 1 else ''}"]
    if n_data:
        parts.append(f"{n_data} data file{'s' if n_data != 1 else ''}")
    parts += [f"{d} {v}" for d, v in (block.get("distributions") or {}).items()]
    return ", ".join(parts)
