"""Files replaced in one step: written beside under a temporary name, flushed to disk, renamed when whole.

A reader or a crash sees the old file or the new one, never half of either. The temporary file's name
carries the writer's pid (``.NAME.PID.tmp``), so whoever finds it later can tell whether its writer
is still alive (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from neffbench.procs._pids import process_alive

TMP_SUFFIX = ".tmp"


def temporary_name(path: Path) -> Path:
    """Where ``path`` is written before it is renamed into place."""
    return path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[Path]:
    """The temporary path to write ``path``'s new content to; renamed onto ``path`` when the block ends well.

    When the block (or the rename) fails, the temporary file goes and the old file stays whole; an
    OSError then names the file meant, not the temporary one (a full disk, a file-size limit). With
    ``fsync`` the new content is on disk before the rename makes it visible.
    """
    target = Path(path)
    tmp = temporary_name(target)
    try:
        yield tmp
        if fsync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, target)
    except OSError as exc:
        _unlink(tmp)
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
    except BaseException:
        _unlink(tmp)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes, *, fsync: bool = True) -> Path:
    """Replace ``path`` with ``data`` in one step."""
    with replacing(path, fsync=fsync) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str, *, fsync: bool = True) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) in one step."""
    return write_bytes(path, text.encode("utf-8"), fsync=fsync)


def write_json(path: str | os.PathLike[str], data: Any) -> Path:
    """Replace ``path`` with ``data`` as indented JSON in one step (non-JSON values as strings)."""
    return write_text(path, json.dumps(data, indent=2, default=str) + "\n")


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def remove_stale_temporaries(folder: str | os.PathLike[str], *, min_age_s: float = 60.0) -> list[Path]:
    """Temporary files a killed writer left: those whose pid is gone (or, without one, old enough)."""
    removed = []
    now = time.time()
    for tmp in Path(folder).glob(f".*{TMP_SUFFIX}"):
        stem = tmp.name[: -len(TMP_SUFFIX)]
        pid_text = stem.rsplit(".", 1)[-1]
        try:
            stale = (not process_alive(int(pid_text))) if pid_text.isdigit() else now - tmp.stat().st_mtime > min_age_s
            if stale:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            continue
    return removed
