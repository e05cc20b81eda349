"""Asking a probe child from the parent (CLI or window thread): one request, one JSON report, a hard timeout."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from neffbench.lifeline import Lifeline

DEFAULT_TIMEOUT_S = 300.0


class ProbeError(RuntimeError):
    """The probe child did not report (it crashed, timed out or printed no JSON); one sentence."""


def ask(command: str, request: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Run ``python -m neffbench.probe COMMAND`` with ``request`` on stdin; its report, or ProbeError."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    lifeline = Lifeline()
    proc = subprocess.Popen([sys.executable, "-m", "neffbench.probe", command], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **lifeline.popen_kwargs(env))
    lifeline.started()
    try:
        stdout, stderr = proc.communicate(json.dumps(request, default=str), timeout=timeout)
    except subprocess.TimeoutExpired:
        # The probe leads its own group: whatever the user's code started goes with it. Not yet reaped,
        # so the group id is still the probe's.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ProbeError(f"the probe did not answer within {timeout:g} s and was stopped.") from None
    finally:
        lifeline.close()
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = " ".join(stderr.strip().splitlines()[-1:]) or f"exit code {proc.returncode}"
        raise ProbeError(f"the probe ended without a report ({tail}).")
    return json.loads(lines[-1])


class WarmProbe:
    """A probe child that stays up between requests (``python -m neffbench.probe serve``).

    Used from one thread at a time (calls are serialised by a lock). A request that times out or
    kills the child restarts it for the next one; ``close`` stops it. The child leads its own
    process group, so whatever the user's code started goes with it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._lifeline: Lifeline | None = None

    def start(self) -> None:
        """Start the child now (its torch import then overlaps whatever the caller does next)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            if self._lifeline is not None:
                self._lifeline.close()
            self._lifeline = Lifeline()
            self._proc = subprocess.Popen([sys.executable, "-m", "neffbench.probe", "serve"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                          start_new_session=True, bufsize=1, **self._lifeline.popen_kwargs(env))
            self._lifeline.started()
        return self._proc

    def _stop_locked(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:  # not reaped yet: the group id is still the child's
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if self._lifeline is not None:
            self._lifeline.close()
            self._lifeline = None
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        with self._lock:
            self._stop_locked()

    def ask(self, command: str, request: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
        with self._lock:
            proc = self._ensure()
            deadline = time.monotonic() + timeout
            try:
                proc.stdin.write(json.dumps({"command": command, "request": request}, default=str) + "\n")
                proc.stdin.flush()
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._stop_locked()
                        raise ProbeError(f"the probe did not answer within {timeout:g} s and was stopped.")
                    ready, _, _ = select.select([proc.stdout], [], [], min(left, 0.5))
                    if not ready:
                        continue
                    line = proc.stdout.readline()
                    if not line:
                        code = proc.wait()
                        self._proc = None
                        raise ProbeError(f"the probe ended without a report (exit code {code}); the next request "
                                         "starts a new one.")
                    if line.startswith("{") and '"ready"' not in line[:12]:
                        return json.loads(line)
            except (BrokenPipeError, OSError) as exc:
                self._stop_locked()
                raise ProbeError(f"the probe could not be reached ({exc}); the next request starts a new one.") \
                    from None


_shared: WarmProbe | None = None
_shared_lock = threading.Lock()


def shared() -> WarmProbe:
    """The process's warm probe (the window's Resolve and CPU check share it); started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WarmProbe()
        return _shared


def close_shared() -> None:
    with _shared_lock:
        if _shared is not None:
            _shared.close()
