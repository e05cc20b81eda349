"""A warm-start server of one's own (:mod:`neffbench.procs.warm_server`): started, handed to children through
the environment, stopped."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from neffbench.procs._child import Child, spawn
from neffbench.procs._warm import ENV, OFF

log = logging.getLogger(__name__)

SERVER_MODULE = "neffbench.procs.warm_server"
# What a worker imports before its job does anything, and what it imports at its first trace on torch 2.10 and later:
# torch_neuronx.trace ends in torch.jit.trace, whose check compares through torch.testing, which imports
# torch.distributed.tensor (and sympy) there; 0.6 CPU-seconds once here instead of in each such worker. A module
# this torch lacks (built without distributed) is left to the workers.
PRELOAD = ("torch", "torch.distributed.tensor")


class WarmServer:
    """A warm-start server of ours: :attr:`address` goes in :data:`ENV`; :meth:`stop` ends it (our death does too)."""

    def __init__(self, child: Child, folder: str):
        self._child = child
        self._folder = folder
        self.address = str(Path(folder, "socket"))

    @property
    def pid(self) -> int:
        return self._child.pid

    @property
    def running(self) -> bool:
        return not self._child.exited()

    def stop(self) -> None:
        self._child.kill_and_reap()
        shutil.rmtree(self._folder, ignore_errors=True)


def start_warm_server(preload: Sequence[str] = PRELOAD, timeout: float = 300.0) -> WarmServer | None:
    """Start a server that imports ``preload`` and forks workers from itself; None (logged) when it cannot start.

    Blocks until the server has imported ``preload`` (a few seconds: the cost one worker would pay). The caller
    puts ``server.address`` into ``os.environ[ENV]`` for its workers to find it.
    """
    folder = tempfile.mkdtemp(prefix="neffbench-warm-")  # private (0700): only this user reaches the socket
    env = {k: v for k, v in os.environ.items() if k != ENV}
    # Device backends (TorchNeuron) load in each worker, after it has its own environment (see warm_server).
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    try:
        child = spawn(
            [sys.executable, "-m", SERVER_MODULE, str(Path(folder, "socket")), *preload],
            env=env, cwd="/", stderr="stdout",
        )  # fmt: skip
    except OSError as exc:
        log.warning("warm-start server not started: %s", exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None
    server = WarmServer(child, folder)
    ready = threading.Event()
    said: list[str] = []

    def read() -> None:  # the server's output: "ready", then only what goes wrong
        assert child.stdout is not None
        try:
            for raw in child.stdout:
                line = raw.decode(errors="replace").rstrip()
                if line == "ready":
                    ready.set()
                elif line:
                    said.append(line)
                    log.debug("warm-start server: %s", line)
        except (OSError, ValueError):  # stop() closed the pipe under us
            pass
        ready.set()

    threading.Thread(target=read, name="neffbench-warm-server-output", daemon=True).start()
    if not ready.wait(timeout) or not server.running:
        log.warning("warm-start server did not start: %s", " / ".join(said[-5:]) or "no word from it")
        server.stop()
        return None
    return server


@contextlib.contextmanager
def warm_workers(preload: Sequence[str] = PRELOAD) -> Iterator[WarmServer | None]:
    """Within this block, this process's workers (and its children's) are forked from a server of its own (unless
    the environment says ``NEFFBENCH_WARM_SERVER=off``)."""
    server = None if os.environ.get(ENV) == OFF else start_warm_server(preload)
    if server is None:
        yield None
        return
    before = os.environ.get(ENV)
    os.environ[ENV] = server.address
    try:
        yield server
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
        server.stop()
