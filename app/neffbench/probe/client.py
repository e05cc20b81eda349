"""Asking a probe child from the parent (CLI or window thread): one request, one JSON report, a hard timeout."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from neffbench import procs
from neffbench.procs import Child, LineReader

DEFAULT_TIMEOUT_S = 300.0
PROBE_MODULE = "neffbench.workers.probe"


class ProbeError(RuntimeError):
    """The probe child did not report (it crashed, timed out or printed no JSON); one sentence."""


def ask(command: str, request: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Run ``python -m neffbench.workers.probe COMMAND`` with ``request`` on stdin; its report, or ProbeError."""
    child = procs.spawn([sys.executable, "-m", PROBE_MODULE, command], stdin="pipe", stderr="pipe", warm=True)
    output = None
    try:
        try:
            child.write(json.dumps(request, default=str).encode())
            child.close_stdin()
        except OSError:  # it died before reading the request: its output says why
            pass
        output = procs.collect(child, timeout)
    finally:
        # The probe leads its own group: whatever the user's code started goes with it.
        if output is None or child.reap(procs.GROUP_GONE_S) is None:
            child.kill_and_reap()
    if output is None:
        raise ProbeError(f"the probe did not answer within {timeout:g} s and was stopped.")
    stdout, stderr = (data.decode("utf-8", errors="replace") for data in output)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = " ".join(stderr.strip().splitlines()[-1:]) or f"exit code {child.returncode}"
        raise ProbeError(f"the probe ended without a report ({tail}).")
    report: dict[str, Any] = json.loads(lines[-1])
    return report


class WarmProbe:
    """A probe child that stays up between requests (``python -m neffbench.workers.probe serve``; ``module``:
    another that serves the same way).

    Used from one thread at a time (calls are serialised by a lock). A request that times out or
    kills the child restarts it for the next one; ``close`` stops it. The child leads its own
    process group, so whatever the user's code started goes with it.
    """

    def __init__(self, module: str = PROBE_MODULE) -> None:
        self.module = module
        self._lock = threading.Lock()
        self._child: Child | None = None
        self._reader: LineReader | None = None

    def start(self) -> None:
        """Start the child now (its torch import then overlaps whatever the caller does next)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> tuple[Child, LineReader]:
        if self._child is None or self._reader is None or self._child.exited():
            self._stop_locked()
            self._child = procs.spawn(
                [sys.executable, "-m", self.module, "serve"], stdin="pipe", stderr="null", warm=True
            )
            self._reader = LineReader(self._child)
        return self._child, self._reader

    def _stop_locked(self) -> None:
        child, self._child, self._reader = self._child, None, None
        if child is not None:
            child.kill_and_reap()

    def close(self) -> None:
        # Killed before the lock is taken: a request waiting on the child (the window's first preview, as it
        # closes) then ends at once with ProbeError instead of holding the close up.
        child = self._child
        if child is not None:
            child.kill()
        with self._lock:
            self._stop_locked()

    def ask(self, command: str, request: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
        with self._lock:
            child, reader = self._ensure()
            deadline = time.monotonic() + timeout
            try:
                child.write((json.dumps({"command": command, "request": request}, default=str) + "\n").encode())
                while True:
                    left = deadline - time.monotonic()
                    line = reader.read_line(left) if left > 0 else None
                    if line is None:
                        self._stop_locked()
                        raise ProbeError(f"the probe did not answer within {timeout:g} s and was stopped.")
                    if line.startswith("{") and '"ready"' not in line[:12]:
                        report: dict[str, Any] = json.loads(line)
                        return report
            except EOFError:
                self._child = self._reader = None
                code = child.reap()
                raise ProbeError(
                    f"the probe ended without a report (exit code {code}); the next request starts a new one."
                ) from None
            except OSError as exc:
                self._stop_locked()
                raise ProbeError(
                    f"the probe could not be reached ({exc}); the next request starts a new one."
                ) from None


_shared: dict[str, WarmProbe] = {}
_shared_lock = threading.Lock()


def shared(module: str = PROBE_MODULE) -> WarmProbe:
    """The process's warm probe (the window's Resolve and CPU check share it), or its warm child of another
    ``module``; started on first use."""
    with _shared_lock:
        if module not in _shared:
            _shared[module] = WarmProbe(module)
        return _shared[module]


def close_shared() -> None:
    """Stop every warm child ``shared`` started (a later request starts its child again)."""
    with _shared_lock:
        for probe in _shared.values():
            probe.close()
