"""Telling processes apart on Linux: a pid's start time, whether it still runs, whether a group has members."""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command (state first), or None when it cannot be read."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its closing one.
    return stat.rsplit(")", 1)[-1].split()


def process_start_time(pid: int) -> str | None:
    """The kernel's start time of a process (Linux), to tell it from a later process given the same pid."""
    fields = _stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def process_alive(pid: int | None, start_time: str | None = None) -> bool:
    """Whether ``pid`` still names the same running process (zombies count as ended)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat_fields(pid)
    if fields and fields[0] == "Z":
        return False
    now = process_start_time(pid)
    return start_time is None or now is None or now == start_time


def group_alive(pgid: int, *, leader_excepted: bool = False) -> bool:
    """Whether any process of group ``pgid`` still runs; zombies (waiting to be reaped) do not count.

    ``leader_excepted``: the leader itself (our unreaped child, which keeps the group id ours) is left out.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not _PROC.is_dir():
        return True
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or (leader_excepted and entry.name == str(pgid)):
            continue
        fields = _stat_fields(entry.name)
        # After the command: state, ppid, pgrp.
        if fields is not None and len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False
