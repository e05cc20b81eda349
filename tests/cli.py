"""The ``neffbench`` command in tests: in a child process as a user runs it (``neffbench``), or in this process
(the ``neffbench_in_process`` fixture) where the process itself is not what the test is about.

A child is forked from the test process's warm-start server where it can be (tests/conftest.py): the process a
user's command is, with torch imported already. In this process the command runs the same
``neffbench.cli.main.main(argv)`` that ``python -m neffbench`` runs, in the directory and with the environment asked
for, its output captured, and leaves nothing behind: its directory, environment, stdin and logging are put back
afterwards. Keep real processes for what only a process shows: signals, exit on a parent's death, the worker
protocol, what a fresh interpreter imports, plugins found through ``PYTHONPATH``.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def neffbench(
    *args: str, cwd: Path = REPO, env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """``python -m neffbench ARGS`` in ``cwd`` with ``env`` over this environment; its output captured as text.

    Forked from this test process's warm-start server when it can be (as the commands a window starts are): the
    process a user's command is, but for an ``import torch`` already done."""
    from neffbench import procs

    argv = [sys.executable, "-m", "neffbench", *args]
    child = procs.spawn(argv, env={**os.environ, **(env or {})}, cwd=cwd, stderr="pipe", lifeline=False, warm=True)
    out = procs.collect(child, timeout)
    if out is None:
        child.kill_and_reap()
        raise subprocess.TimeoutExpired(argv, timeout)
    code = child.reap()
    return subprocess.CompletedProcess(argv, code, _text(out[0]), _text(out[1]))


def _text(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` reads it: decoded, with universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()


class _StderrNow(logging.Handler):
    """What Python does with a warning logged when no handler is configured: its message on (today's) sys.stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(self.format(record) + "\n")


@pytest.fixture
def neffbench_in_process(capsys, monkeypatch):
    """``neffbench_in_process(*args, cwd=REPO, env=None, stdin=None)``: ``neffbench ARGS`` run by ``main(argv)`` in
    this process; a CompletedProcess as :func:`neffbench` returns (exit code, stdout, stderr as text)."""
    from neffbench.cli.main import main

    def run(
        *args: str | os.PathLike[str], cwd: Path = REPO, env: dict | None = None, stdin: str | bytes | None = None
    ) -> subprocess.CompletedProcess:
        argv = [os.fspath(a) for a in args]
        handler = _StderrNow(logging.WARNING)
        root = logging.getLogger()
        with monkeypatch.context() as mp:
            mp.chdir(cwd)
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            if stdin is not None:
                data = stdin.encode() if isinstance(stdin, str) else stdin
                mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
            capsys.readouterr()  # what the test printed before is not the command's
            root.addHandler(handler)
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's errors, --help and --version
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
            finally:
                root.removeHandler(handler)
            out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["neffbench", *argv], code, out, err)

    return run


@pytest.fixture
def neffbench_unless_env(neffbench_in_process):
    """``neffbench_unless_env(*args, cwd=REPO, env=None, timeout=300)``: ``neffbench ARGS`` in this process, or in a
    child process where an environment is given (the toolchain fakes: a process finds them through its
    ``PYTHONPATH`` and ``PATH`` as it starts, which this process does not read again)."""

    def run(*args: str, cwd: Path = REPO, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return neffbench(*args, cwd=cwd, env=env, timeout=timeout) if env else neffbench_in_process(*args, cwd=cwd)

    return run
