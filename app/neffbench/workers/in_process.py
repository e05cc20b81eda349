"""A compile job's stages on a thread of this process, for the backend that starts no compiler (cpu-check).

``neffbench.trace`` checks on the CPU where its caller waits, as ``torch_neuronx.trace`` traces in its caller's
process: a worker process would cost its ``import torch``, seconds, against a trace of tens of milliseconds. The
stages are the worker's own (``workers.compile.run_job``), their protocol lines carried by a pipe to the job runner
as a worker's are; what they change of the process is put back afterwards (the random generators the build seeds,
the modules of your files it imported). A compile with a compiler always gets a worker process of its own.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from neffbench.procs import Emitter
from neffbench.workers.compile import run_job

# The only backend whose stages may run here: it runs no compiler, so there is nothing to stop but Python.
BACKEND = "cpu-check"
_NO_WORKER = " (no worker process: cpu-check runs no compiler)"


class Stopped(BaseException):
    """Raised into the stages at their next stage when the job is cancelled (past their ``except Exception``, as a
    signal would stop a worker)."""


class _StoppableEmitter(Emitter):
    def __init__(self, fd: int, stop: threading.Event):
        super().__init__(fd)
        self._stop = stop

    def stage(self, stage: str) -> None:
        if self._stop.is_set():
            raise Stopped(f"cancelled before stage '{stage}'")
        super().stage(stage)


class _Lines(io.TextIOBase):
    """A text stream whose whole lines go out as protocol lines (a traceback into job.log)."""

    def __init__(self, out: Emitter):
        self._out = out
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._out.line(line)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._out.line(self._pending)
            self._pending = ""


@contextlib.contextmanager
def _kept_process_state() -> Iterator[None]:
    """The random generators' states, the import path and the modules of the user's files, as they were before (a
    module the build made by hand, without an import spec, goes too)."""
    import torch

    from neffbench.usercode.origin import classify, module_file

    numpy = sys.modules.get("numpy")
    states: list[Any] = [torch.random.get_rng_state(), random.getstate(), numpy.random.get_state() if numpy else None]
    modules = set(sys.modules)
    path = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = path
        torch.random.set_rng_state(states[0])
        random.setstate(states[1])
        if numpy is not None:
            numpy.random.set_state(states[2])
        for name in set(sys.modules) - modules:
            module = sys.modules.get(name)
            file = module_file(module)
            if (file is not None and classify(file) == "user") or getattr(module, "__spec__", True) is None:
                del sys.modules[name]  # a later job's build imports it afresh, and records it as read


class InProcessChild:
    """The stages on a thread, behind what a job runner asks of its worker process (:class:`neffbench.procs.Child`):
    a pipe carries its lines, ``terminate`` stops it at its next stage, ``reap`` waits for the thread."""

    def __init__(self, job_dir: Path, backend: str = BACKEND):
        if backend != BACKEND:
            raise ValueError(f"only {BACKEND} runs in this process; {backend} needs a worker")
        read_end, self._write_end = os.pipe()
        self.stdout = os.fdopen(read_end, "rb", buffering=0)
        self.pid = os.getpid()
        self.returncode: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(job_dir, backend), name="neffbench-in-process-job")
        self._thread.start()

    def _run(self, job_dir: Path, backend: str) -> None:
        out = _StoppableEmitter(self._write_end, self._stop)
        errors = _Lines(out)
        code = 1
        try:
            with _kept_process_state():
                code = run_job(job_dir, backend, out, f"this process (pid {self.pid})", _NO_WORKER, errors)
        except Stopped:
            code = -signal.SIGTERM
        finally:
            errors.flush()
            self.returncode = code
            os.close(self._write_end)

    def exited(self) -> bool:
        return not self._thread.is_alive()

    def terminate(self, grace_s: float) -> None:
        self._stop.set()

    def kill(self) -> None:
        self._stop.set()

    def reap(self, timeout: float | None = None) -> int | None:
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.stdout.close()
        return self.returncode

    def kill_and_reap(self, timeout: float | None = None) -> int | None:
        self._stop.set()
        return self.reap(timeout)
