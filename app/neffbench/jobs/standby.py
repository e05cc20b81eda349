"""Starting the worker process: its command and environment, and a standby worker started before its job exists."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import neffbench
from neffbench.backends.registry import CHOICES as BACKENDS
from neffbench.probe.client import DEFAULT_TIMEOUT_S, ProbeError
from neffbench.procs import Child, LineReader, parse_event, spawn

log = logging.getLogger(__name__)

BUILD_CWD_ENV = "NEFFBENCH_BUILD_CWD"
WORKER_MODULE = "neffbench.workers.compile"
ANSWER_EVENT = "answer"  # the worker's event carrying what it answered to ``StandbyWorker.ask``


def spawn_worker(backend: str, job_dir: Path | None = None, *, cwd: str | Path | None = None) -> Child:
    """Start ``python -m neffbench.workers.compile`` for ``job_dir``, or as a standby (``--standby``) when it is None.

    Either way the worker leads a process group of its own (one signal reaches the compiler too) and
    holds a lifeline (:mod:`neffbench.procs`). Its stdout and stderr share one pipe. A job's worker runs
    in the job directory, so that anything written to the current directory stays with the job; a
    standby gets its job directory on stdin and changes into it itself.
    """
    env = os.environ.copy()
    # The user's code is built where the command was typed (or the window started), as when they run it
    # themselves: a relative torch.load("weights.pt") finds its file. The worker itself runs in the job.
    env[BUILD_CWD_ENV] = os.getcwd()
    # The worker must import this very neffbench. When the parent found it only through a path
    # added at run time, hand that path on (but never put site-packages ahead of the stdlib).
    package_root = Path(neffbench.__file__).resolve().parent.parent
    if package_root not in {Path(p).resolve() for p in sys.path if p}:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(package_root), env.get("PYTHONPATH")) if p)
    if job_dir is None:
        # A standby imports torch before its job is known, and torch would import TorchNeuron with it
        # (an autoloaded device backend) before the job could point TorchNeuron's caches and log into its
        # directory. The worker imports torch_neuronx itself once it has.
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    target = ["--standby"] if job_dir is None else [str(job_dir)]
    return spawn(
        [sys.executable, "-m", WORKER_MODULE, *target, "--backend", backend],
        env=env,
        cwd=job_dir if cwd is None else cwd,
        stdin="pipe" if job_dir is None else "null",
        warm=True,
    )


class StandbyWorker:
    """A worker started before its job exists, so that its ``import torch`` overlaps the parent's own work.

    Who owns the process:

    - from the constructor until ``hand_over`` or ``discard``: this object, and so whoever holds it,
      who must call one of the two (``discard`` after ``hand_over`` does nothing, so a ``finally:
      discard()`` is always safe);
    - after ``hand_over`` returned a Child: the caller (a CompileJob, which cancels, times out and
      reaps it like any worker it spawned; the standby has led its own process group from the start);
    - after ``hand_over`` returned None, or ``discard``: nobody, it has been killed and reaped here;
    - if the parent dies first: the standby reads EOF on its stdin and exits by itself.

    ``hand_over`` and ``discard`` may be called from different threads.
    """

    def __init__(self, backend: str = "auto"):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
        self.backend = backend
        self._lock = threading.Lock()
        # `python -m` puts the current directory first on sys.path, and the parent's may hold any .py
        # file that would shadow one of torch's imports: "/" holds none, like a spawned worker's fresh
        # job directory, and unlike a temporary directory cannot vanish under torch's import (MKL
        # then fails to load). The worker changes into its job directory once it has one.
        self._proc: Child | None = spawn_worker(backend, cwd="/")
        self.pid = self._proc.pid

    @classmethod
    def try_start(cls, backend: str = "auto") -> StandbyWorker | None:
        """A standby, or None when it could not be started (the job then spawns its worker as usual)."""
        try:
            return cls(backend)
        except OSError:
            log.warning("could not start a standby worker", exc_info=True)
            return None

    def ask(self, command: str, request: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
        """What a probe child would report for ``command`` (``prepare``: what the build reads), answered by this
        worker before its job, so that no second process imports torch for it. ProbeError when it cannot answer
        (it has gone, or it did not answer within ``timeout``, and is then discarded): the caller goes on without."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.exited():
                raise ProbeError("the standby worker has gone.")
            try:
                proc.write((json.dumps({"command": command, "request": request}, default=str) + "\n").encode())
            except OSError:
                raise ProbeError("the standby worker has gone.") from None
            reader = LineReader(proc)
            deadline = time.monotonic() + timeout
            try:
                while (line := reader.read_line(max(0.0, deadline - time.monotonic()))) is not None:
                    event = parse_event(line)
                    if event is not None and event.get("type") == ANSWER_EVENT:
                        return dict(event.get("report") or {})
            except EOFError:
                pass  # it died answering: what the user's code did to it is the job's own to find
        self.discard()
        raise ProbeError(f"the standby worker did not answer within {timeout:g} s and was stopped.")

    def hand_over(self, job_dir: str | Path) -> Child | None:
        """Send it ``job_dir`` and return its Child, which the caller owns from now on.

        None when it has already exited, or cannot take the job: it has then been reaped here and
        the caller spawns a worker of its own.
        """
        line = os.fsencode(str(job_dir)) + b"\n"
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return None
            if line.count(b"\n") == 1 and not proc.exited():
                try:
                    # The one line is all that is ever written; closing stdin tells it that.
                    proc.write(line)
                    proc.close_stdin()
                except OSError:  # it died in between: a broken pipe
                    pass
                else:
                    return proc
            proc.kill_and_reap()
            return None

    def discard(self) -> None:
        """SIGKILL its process group and reap it, unless it was handed over; idempotent."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None:
                proc.kill_and_reap()
