"""Fakes of the Neuron toolchain for tests (never imported by the product).

``python/torch_neuronx`` is a fake ``torch_neuronx`` package (put ``PYTHON_DIR`` on PYTHONPATH) and
``bin/neuronx-cc`` a fake compiler (put ``BIN_DIR`` on PATH); both behave as
shared/docs/neuron-facts.md describes. ``FAKE_NEURONX_CC_SCENARIO`` picks what happens:

- ``success`` (default): passes logged in the real format, ``Compiler status PASS``, a NEFF at ``--output``.
- ``hashed-name``: as success, but the NEFF is ``graph.<hash>.neff`` beside ``--output``.
- ``compile-error``: ``[NLA001]`` USER lines, a root cause printed only on stdout, ``Compiler status FAIL``, exit 1.
- ``oom``: a few passes, then the compiler kills itself with SIGKILL (exit -9), as the OOM killer would.
- ``slow``: spawns a grandchild, writes both pids to ``FAKE_NEURONX_CC_PIDFILE``, then prints dots for minutes;
  with ``FAKE_NEURONX_CC_IGNORE_TERM=1`` both ignore SIGTERM.
- ``split-output``: lines only on stdout, only on stderr and only in the log file (multibyte text, an
  unterminated last log line), then success.
- ``dropped-flag`` (torch_neuronx): the trace silently drops ``--lnc`` from the command it runs.
- ``python-error`` (torch_neuronx): the trace raises the RuntimeError a ``None`` output gives.
- ``worker-segfault`` (torch_neuronx): the process calling trace dies of SIGSEGV.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

FAKES = Path(__file__).resolve().parent
PYTHON_DIR = FAKES / "python"
BIN_DIR = FAKES / "bin"
SCENARIO_ENV = "FAKE_NEURONX_CC_SCENARIO"
PIDFILE_ENV = "FAKE_NEURONX_CC_PIDFILE"


def fake_env(scenario: str = "success", *, path: bool = True, python: bool = True, **extra: str) -> dict[str, str]:
    """Environment variables that put the fakes in place (set them with monkeypatch)."""
    env = {SCENARIO_ENV: scenario, "FAKE_NEURONX_CC_PYTHON": sys.executable, **extra}
    if python:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_DIR), os.environ.get("PYTHONPATH")) if p)
    if path:
        env["PATH"] = os.pathsep.join((str(BIN_DIR), os.environ.get("PATH", "")))
    return env


def read_pidfile(path: Path) -> dict[str, int]:
    """``{"compiler": pid, "grandchild": pid}`` as the slow scenario writes them (empty until it has)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return {name: int(pid) for name, pid in (line.split() for line in text.splitlines() if line.strip())}
