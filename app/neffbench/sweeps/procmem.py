"""The memory a job's processes hold, sampled from /proc: the worker leads its own process group, so the group is the job."""

from __future__ import annotations

import os
import threading

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not Linux
    _PAGE = 4096
INTERVAL_S = 0.25


def group_rss(pgids: set[int] | frozenset[int]) -> dict[int, int]:
    """Resident bytes of each process group in ``pgids``, summed over its processes; empty where /proc is not."""
    out: dict[int, int] = {}
    if not pgids:
        return out
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue  # it ended between the listing and the read
        # The command name (field 2) may hold spaces and parentheses: split after its closing one.
        rest = data.rsplit(b")", 1)[-1].split()
        try:
            pgrp, rss_pages = int(rest[2]), int(rest[21])  # fields 5 (pgrp) and 24 (rss)
        except (IndexError, ValueError):
            continue
        if pgrp in pgids:
            out[pgrp] = out.get(pgrp, 0) + rss_pages * _PAGE
    return out


class GroupSampler:
    """Current and peak resident memory of the process groups it watches; one thread samples them all.

    The sum of RSS counts shared library pages once per process, so it errs high, which is the side
    a limiter wants to err on. A job shorter than the interval may show a peak below its true one.
    """

    def __init__(self, interval_s: float = INTERVAL_S):
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._current: dict[int, int] = {}
        self._peak: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, pgid: int) -> None:
        with self._lock:
            self._current[pgid] = 0
            self._peak.setdefault(pgid, 0)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="neffbench-sweep-memory", daemon=True)
                self._thread.start()
        self.sample()

    def current(self, pgid: int) -> int:
        with self._lock:
            return self._current.get(pgid, 0)

    def forget(self, pgid: int) -> int | None:
        """Stop watching a group; its peak in bytes, or None when it was never seen with memory."""
        self.sample()
        with self._lock:
            self._current.pop(pgid, None)
            peak = self._peak.pop(pgid, 0)
        return peak or None

    def sample(self) -> None:
        with self._lock:
            watched = frozenset(self._current)
        found = group_rss(watched)
        with self._lock:
            for pgid, rss in found.items():
                if pgid in self._current:
                    self._current[pgid] = rss
                    self._peak[pgid] = max(self._peak.get(pgid, 0), rss)

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()
