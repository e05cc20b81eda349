"""The ``neffbench`` command run as a user runs it, in a child process: the one helper the tests that do use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def neffbench(
    *args: str, cwd: Path = REPO, env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """``python -m neffbench ARGS`` in ``cwd`` with ``env`` over this environment; its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "neffbench", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
