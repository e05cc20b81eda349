"""Asking a probe child from the parent (CLI or window thread): one request, one JSON report, a hard timeout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any

DEFAULT_TIMEOUT_S = 300.0


class ProbeError(RuntimeError):
    """The probe child did not report (it crashed, timed out or printed no JSON); one sentence."""


def ask(command: str, request: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Run ``python -m neffbench.probe COMMAND`` with ``request`` on stdin; its report, or ProbeError."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "neffbench.probe", command], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(json.dumps(request, default=str), timeout=timeout)
    except subprocess.TimeoutExpired:
        # The probe leads its own group: whatever the user's code started goes with it. Not yet reaped,
        # so the group id is still the probe's.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ProbeError(f"the probe did not answer within {timeout:g} s and was stopped.") from None
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = " ".join(stderr.strip().splitlines()[-1:]) or f"exit code {proc.returncode}"
        raise ProbeError(f"the probe ended without a report ({tail}).")
    return json.loads(lines[-1])
