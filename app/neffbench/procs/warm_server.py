"""The warm-start server: a process that has imported torch once, and forks each worker from itself.

A worker spends most of its start-up importing torch (about 1.2 CPU-seconds on a small machine: more than a small
job's compile). Forked from a process that has done it, a worker starts with torch in memory, and is otherwise the
process ``python -m MODULE ARGS`` would have been: its own session and process group, its own stdin, stdout,
stderr and lifeline, its environment, working directory, ``sys.path`` and ``sys.argv``, the module run as
``__main__`` and the interpreter's normal exit. It is the server's child, so the server tells the client its exit
status, and reaps it only when the client has closed the connection (until then its pid stays the client's to
signal, as with a child of its own).

The server declines a request it cannot serve faithfully, and the client then starts the worker the plain way:
another interpreter or another neffbench, an environment that differs in what is read while torch loads
(:data:`READ_AT_IMPORT`), or a ``PYTHONPATH`` holding a torch of its own.

Run as ``python -m neffbench.procs.warm_server ADDRESS MODULE...`` by :func:`neffbench.procs.start_warm_server`;
it ends when its lifeline closes (its owner is gone) or its owner stops it.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import selectors
import signal
import socket
import sys
import tempfile
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench import installed
from neffbench.procs import _warm
from neffbench.procs._lifeline import ENV as LIFELINE_ENV

# Environment variables read while the interpreter starts or torch, its native libraries and the preloaded modules
# load (thread pools, allocators, logging, locale, sympy's cache): a worker whose environment differs from the
# server's in one of them must start afresh. Left out: what the forked worker applies itself, and what is read only
# when used (PYTHONBREAKPOINT at each breakpoint(); TORCHINDUCTOR_*, TORCHDYNAMO_* when those load, in the worker,
# which neither torch nor the preloaded modules do on import).
READ_AT_IMPORT = ("PYTHON", "TORCH_", "PYTORCH_", "SYMPY_", "OMP_", "KMP_", "MKL_", "GOMP_", "OPENBLAS_", "CUDA",
                  "NVIDIA_", "LD_", "MALLOC_", "LANG", "LC_", "TZ")  # fmt: skip
NOT_READ_AT_IMPORT = frozenset(
    {"PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONBREAKPOINT", "TORCH_DEVICE_BACKEND_AUTOLOAD"}
)
# Read when torch loads, yet a worker can take it up itself (torch.set_num_threads gives torch, OpenMP and MKL the same
# counts): a server started without it forks a worker that has it, such as a Ray task's (Ray sets it to the task's
# CPUs). A server started with it declines a worker with another, or none: the default count cannot be put back.
THREADS = "OMP_NUM_THREADS"
MAX_MESSAGE = 1 << 20
MAX_FDS = 8


def import_fingerprint(env: dict[str, str]) -> dict[str, str]:
    """What of ``env`` a process holds from its start-up and torch's import, and cannot take up later."""
    keys = [k for k in env if k.startswith(READ_AT_IMPORT) and k not in NOT_READ_AT_IMPORT and k != THREADS]
    return {k: env[k] for k in sorted(keys)}


def threads_taken_up(mine: str | None, theirs: str | None) -> bool:
    """Whether a worker with ``OMP_NUM_THREADS=theirs`` can be forked from a server with ``mine`` (see THREADS)."""
    return theirs == mine or (mine is None and theirs is not None and theirs.strip().isdigit() and int(theirs) > 0)


def _pythonpath(env: dict[str, str]) -> list[str]:
    return [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]


@dataclass
class _Worker:
    conn: socket.socket
    pid: int
    exited: bool = False


@dataclass
class _Server:
    listener: socket.socket
    lifeline: int
    workers: dict[int, _Worker] = field(default_factory=dict)  # by the connection's fd
    abandoned: set[int] = field(default_factory=set)  # workers still running whose client has gone

    def __post_init__(self) -> None:
        self.fingerprint = import_fingerprint(dict(os.environ))
        own = set(_pythonpath(dict(os.environ)))
        # sys.path as the interpreter made it, less what this process's PYTHONPATH and `-m` added: each worker
        # gets its own PYTHONPATH and working directory in front of it.
        self.base_path = [p for p in sys.path[1:] if p not in own]
        self.neffbench = _package_file()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "child")
        self.selector.register(self.lifeline, selectors.EVENT_READ, "lifeline")

    def serve(self) -> dict[str, Any] | None:
        """Serve until the lifeline closes (None), or return a request in a forked worker."""
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the selector through the wakeup fd
        signal.set_wakeup_fd(self.wake_w)
        while True:
            for key, _ in self.selector.select():
                if key.data == "lifeline":
                    with contextlib.suppress(OSError):
                        if os.read(self.lifeline, 1):
                            continue
                    return None
                if key.data == "child":
                    with contextlib.suppress(OSError):
                        os.read(self.wake_r, 4096)
                    self._collect()
                elif key.data == "accept":
                    request = self._accept()
                    if request is not None:
                        return request  # in the forked worker
                else:
                    self._closed(key.data)

    def _accept(self) -> dict[str, Any] | None:
        conn, _ = self.listener.accept()
        try:
            conn.settimeout(10)
            data, fds, _, _ = socket.recv_fds(conn, MAX_MESSAGE, MAX_FDS)
        except OSError:
            conn.close()
            return None
        try:
            request: dict[str, Any] = json.loads(data)
            refusal = self._refusal(request, fds)
        except (ValueError, TypeError, KeyError) as exc:
            refusal = f"unreadable request: {exc}"
        if refusal:
            _send(conn, {"declined": refusal})
            conn.close()
            _close_all(fds)
            return None
        address = self.listener.getsockname()
        grouped_r, grouped_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.setsid()  # before the client hears the pid: its first signal to the group must reach it
            os.write(grouped_w, b"1")
            self._leave()
            _close_all([grouped_r, grouped_w])
            conn.close()
            request["fds"] = fds
            request["address"] = address
            return request
        os.close(grouped_w)
        os.read(grouped_r, 1)
        os.close(grouped_r)
        _close_all(fds)
        self.workers[conn.fileno()] = _Worker(conn, pid)
        self.selector.register(conn, selectors.EVENT_READ, conn.fileno())
        with contextlib.suppress(OSError):  # a client gone already: its end of the connection says so next
            _send(conn, {"pid": pid})
        self._collect()  # it may have ended already
        return None

    def _refusal(self, request: dict[str, Any], fds: list[int]) -> str:
        """Why this server cannot start ``request`` as its own interpreter would have, or ''."""
        env = request["env"]
        if request["executable"] != sys.executable:
            return f"another interpreter ({request['executable']})"
        if request["neffbench"] != self.neffbench:
            return f"another neffbench ({request['neffbench']})"
        if not os.path.isdir(request["cwd"]):  # started afresh, it fails as Popen fails: at the start, with OSError
            return f"no such folder to start in ({request['cwd']})"
        if len(fds) != len(request["fd_roles"]):
            return "the request's files did not arrive"
        differ = {k for k, _ in set(import_fingerprint(env).items()) ^ set(self.fingerprint.items())}
        if not threads_taken_up(os.environ.get(THREADS), env.get(THREADS)):
            differ.add(THREADS)
        if differ:
            return "an environment read at start-up differs: " + ", ".join(sorted(differ))
        for entry in _pythonpath(env):
            if (Path(request["cwd"], entry) / "torch" / "__init__.py").exists():
                return f"PYTHONPATH holds a torch of its own ({entry})"
        return ""

    def _collect(self) -> None:
        """Tell each client whose worker has exited its status; reap the ones whose client has gone."""
        for worker in list(self.workers.values()):
            if worker.exited:
                continue
            try:
                info = os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
            if info is None:
                continue
            worker.exited = True
            code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            with contextlib.suppress(OSError):
                _send(worker.conn, {"exit": code})
        for pid in list(self.abandoned):
            try:
                done = os.waitpid(pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                done = True
            if done:
                self.abandoned.discard(pid)

    def _closed(self, key: int) -> None:
        """The client asks us to reap its worker, or it has gone: the worker's pid may now go to another process."""
        worker = self.workers.pop(key)
        self.selector.unregister(worker.conn)
        try:
            asked = worker.conn.recv(MAX_MESSAGE)
        except OSError:
            asked = b""
        if worker.exited:
            os.waitpid(worker.pid, 0)
            if asked:  # "reap": the client waits to hear it is done, as a reaping parent would
                with contextlib.suppress(OSError):
                    _send(worker.conn, {"reaped": worker.pid})
        else:  # the client has gone; its worker's lifeline ends it soon, and the next SIGCHLD reaps it
            self.abandoned.add(worker.pid)
        worker.conn.close()

    def _leave(self) -> None:
        """In a forked worker: drop the server's files and signal handling."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.selector.close()
        for worker in self.workers.values():
            worker.conn.close()
        self.listener.close()
        _close_all([self.wake_r, self.wake_w, self.lifeline])


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall(json.dumps(message).encode())


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _package_file() -> str:
    import neffbench

    return str(neffbench.__file__)


def _become(request: dict[str, Any], base_path: list[str]) -> None:
    """Turn this forked process (a session of its own already) into ``python -m MODULE ARGS`` as asked."""
    env: dict[str, str] = request["env"]
    fds: list[int] = request["fds"]
    roles: list[str] = request["fd_roles"]
    for role, fd in zip(roles, fds):
        if role in ("stdin", "stdout", "stderr"):
            os.dup2(fd, ("stdin", "stdout", "stderr").index(role))
    for role, fd in zip(roles, fds):
        if role in ("stdin", "stdout", "stderr"):
            os.close(fd)
        else:  # a file the worker finds through an environment variable (the lifeline)
            os.set_inheritable(fd, True)
            env[role] = str(fd)
    os.chdir(request["cwd"])
    threads_read = os.environ.get(THREADS)  # what torch read here, as the server
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # found again from this environment's TMPDIR
    sys.path[:] = [request["cwd"], *_pythonpath(env), *base_path]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    _reopen_stdio(env)
    if "numpy.random" in sys.modules:  # its global generator was seeded in the server (random reseeds on fork)
        sys.modules["numpy.random"].seed()
    torch = sys.modules.get("torch")
    if torch is not None and env.get(THREADS) != threads_read:
        torch.set_num_threads(int(env[THREADS]))  # as torch would have read it (see THREADS)
    if env.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") != "0":
        # What `import torch` would have done here: load the installed device backends (the server did not).
        autoload = getattr(torch, "_import_device_backends", None)
        if autoload is not None:
            autoload()
    sys.argv = [request["module"], *request["args"]]
    _warm.FORKED_BY = request["address"]


def _reopen_stdio(env: dict[str, str]) -> None:
    """sys.stdin, stdout and stderr on the worker's own descriptors, buffered and encoded as its environment says."""
    encoding, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    streams = []
    for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb")):
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: Any = (
            raw if unbuffered and mode == "wb" else (io.BufferedReader if mode == "rb" else io.BufferedWriter)(raw)
        )
        streams.append(
            io.TextIOWrapper(
                buffered,
                encoding=encoding or None,
                errors=errors or ("backslashreplace" if fd == 2 else None),
                line_buffering=fd == 2,
                write_through=unbuffered or fd == 2,
            )
        )
    # sys.__stdout__ and the like stay the server's: on the same descriptors, so they write where these do.
    sys.stdin, sys.stdout, sys.stderr = streams


def _run(module: str) -> None:
    """Run ``module`` as ``python -m`` does, in a ``__main__`` of its own (not this server's module)."""
    import runpy

    sys.modules["__main__"] = types.ModuleType("__main__")
    run_as_main = getattr(runpy, "_run_module_as_main", None)  # the function `python -m` itself calls
    if run_as_main is not None:
        run_as_main(module, alter_argv=True)
    else:
        runpy.run_module(module, run_name="__main__", alter_sys=True)


def main(argv: list[str]) -> int:
    address, preload = argv[0], argv[1:]
    lifeline = int(os.environ.pop(LIFELINE_ENV, "-1"))
    if lifeline < 0:
        print(
            "the warm-start server needs a lifeline: start it with neffbench.procs.start_warm_server", file=sys.stderr
        )
        return 2
    os.set_inheritable(lifeline, False)
    for name in preload:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # a worker that needs it imports it (or fails) as it would have
            print(f"not preloaded: {name} ({exc})", flush=True)
    # What is installed, which a worker's listing of the kernels and build of the user's code read from every
    # distribution's metadata (a fifth of a CPU-second): the worker reads it again only if it has changed since.
    installed.read()
    # What is imported now lives as long as every worker: out of the collector's reach, a worker's collections
    # neither walk it nor write to its pages (which would copy them out of the memory it shares with us).
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(64)
    server = _Server(listener, lifeline)
    print("ready", flush=True)  # the owner waits for this line before it hands the address out
    request = server.serve()
    if request is None:
        return 0
    _become(request, server.base_path)
    del server
    _run(request["module"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
