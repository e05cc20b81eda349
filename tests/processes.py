"""Waiting for child processes in tests: polling with a deadline, and the pids the slow fake compiler wrote."""

from __future__ import annotations

import time
from pathlib import Path


def until(predicate, timeout: float = 30.0, what: str = "the condition") -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def fake_compiler_pids(pidfile: Path) -> list[int]:
    """Every compiler and grandchild pid the slow fake wrote (it appends, one pair per compile)."""
    try:
        text = pidfile.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [int(line.split()[1]) for line in text.splitlines() if line.strip()]


class SESSION:
    server = None  # this test process's warm-start server while there is one (set by tests/conftest.py)


def session_servers() -> set[int]:
    """The pid of this test process's warm-start server, if it has one."""
    return {SESSION.server.pid} if SESSION.server is not None else set()
