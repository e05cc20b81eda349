"""What the installed distributions declare (their entry points, and which of them provides each top-level package),
read from their metadata again only when what is installed may have changed.

Reading it opens every distribution's metadata on ``sys.path``: ``packages_distributions`` takes a fifth of a
CPU-second in a venv with torch, and the window, each compile and each build of the user's code ask for it. What is
read is kept for the folders on ``sys.path`` that hold distributions, each with its modification time: installing,
upgrading or removing a distribution adds or removes a ``.dist-info`` folder there, which changes that time, and a
folder that comes onto ``sys.path`` with distributions in it changes the key. A folder of plain modules (each traced
object's own) changes nothing. A warm-start server reads it before it forks (:func:`read`), so each worker starts
with it, as valid as if the worker had read it itself.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
from importlib import metadata
from typing import Any

# (path, modification time) of each sys.path folder that holds distributions, in sys.path's order.
Stamp = tuple[tuple[str, int], ...]


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``, in the order the metadata lists them."""
    return list(_entry_points(_stamp()).select(group=group))


def packages_distributions() -> dict[str, list[str]]:
    """{top-level package: the distributions that provide it}, as ``importlib.metadata`` says; empty when a broken
    distribution's metadata cannot be read (that must not stop a build)."""
    return _packages_distributions(_stamp())


def read() -> None:
    """Read both now (the warm-start server, before it forks its workers)."""
    stamp = _stamp()
    _packages_distributions(stamp)
    _entry_points(stamp)


def forget() -> None:
    """Read afresh at the next call (a test that replaces ``importlib.metadata``'s functions)."""
    _entry_points.cache_clear()
    _packages_distributions.cache_clear()


@functools.lru_cache(maxsize=4)
def _entry_points(_stamp: Stamp) -> Any:
    # Every group's, which each caller selects from: the server reads them for workers whose groups it does not know.
    return metadata.entry_points()


@functools.lru_cache(maxsize=4)
def _packages_distributions(_stamp: Stamp) -> dict[str, list[str]]:
    try:
        return dict(metadata.packages_distributions())
    except Exception:  # noqa: BLE001 - a broken distribution's metadata must not stop a build
        return {}


def _stamp() -> Stamp:
    out = []
    for entry in sys.path:
        path = os.path.abspath(entry or ".")
        mtime = _holds_distributions(path)
        if mtime is not None:
            out.append((path, mtime))
    return tuple(out)


# Folder -> (its modification time when listed, whether it held distributions then): a stat, not a listing, per call.
_listed: dict[str, tuple[int, bool]] = {}


def _holds_distributions(entry: str) -> int | None:
    """The modification time of a sys.path entry that can hold a distribution's metadata (a folder with a
    .dist-info or .egg-info in it, or anything that is not a folder: a zip, an egg); None for any other."""
    try:
        st = os.stat(entry)
    except OSError:  # a folder that is not there (yet) holds nothing
        return None
    if not stat.S_ISDIR(st.st_mode):
        return st.st_mtime_ns
    known = _listed.get(entry)
    if known is None or known[0] != st.st_mtime_ns:
        try:
            with os.scandir(entry) as found:
                holds = any(f.name.endswith((".dist-info", ".egg-info")) for f in found)
        except OSError:
            return None
        known = _listed[entry] = (st.st_mtime_ns, holds)
    return st.st_mtime_ns if known[1] else None
