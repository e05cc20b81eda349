"""The client's end of the warm-start server (:mod:`neffbench.procs.warm_server`): a worker forked from a process
that has imported torch already, seen as a child of one's own.

Whoever starts a server (:mod:`._warm_owner`) puts its address in :data:`ENV` of its environment; every
``python -m`` worker spawned with ``warm=True`` by that process or its children (the ``neffbench`` commands a
window or a script starts) then asks that server first, and starts the plain way when there is none, it has
gone, or it declines.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from typing import IO

from neffbench.procs._lifeline import ENV as LIFELINE_ENV
from neffbench.procs._lifeline import Lifeline

log = logging.getLogger(__name__)

ENV = "NEFFBENCH_WARM_SERVER"
OFF = "off"  # in ENV: every worker starts afresh, and nothing starts a server
FORKED_BY: str | None = None  # in a worker the server forked: the server's address (set by the server)


def forked_by() -> str | None:
    """The warm-start server this process was forked by (its address), or None when it started afresh."""
    return FORKED_BY


def forked_note() -> str:
    """For a worker's first log line: how it started, when that was not afresh."""
    return " (forked by the warm-start server: torch was imported already)" if FORKED_BY else ""


_REPLY_TIMEOUT_S = 30.0  # the server answers as soon as it has forked; this only bounds a server that hangs
_MAX_MESSAGE = 1 << 20


class ForkedProcess:
    """A worker the server forked, seen as a child of one's own: its pid (and process group), pipes and exit status.

    The server keeps it unreaped until :meth:`reap` closes the connection, so until then its pid cannot be given
    to another process and signals to its group reach it alone.
    """

    def __init__(
        self, conn: socket.socket, pid: int, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: IO[bytes] | None
    ):
        self._conn = conn
        self.pid = pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode: int | None = None
        self._lock = threading.Lock()

    def exited(self) -> bool:
        return self.wait_exit(0)

    def wait_exit(self, timeout: float | None = None) -> bool:
        """Block until the server says the worker exited (False if it has not within ``timeout``)."""
        with self._lock:
            if self.returncode is not None:
                return True
            if self._conn.fileno() < 0:
                return True
            ready, _, _ = select.select([self._conn], [], [], timeout)
            if not ready:
                return False
            try:
                data = self._conn.recv(_MAX_MESSAGE)
            except OSError:
                data = b""
            # No message: the server has gone, and with it the worker (its death signal ends it: see watch()).
            self.returncode = json.loads(data)["exit"] if data else -int(signal.SIGKILL)
            return True

    def reap(self) -> int:
        """The exit status (negative: the signal that ended it), once the server has reaped the worker."""
        self.wait_exit()
        with self._lock:
            try:
                self._conn.sendall(b'"reap"')
                self._conn.settimeout(_REPLY_TIMEOUT_S)
                self._conn.recv(_MAX_MESSAGE)  # the server's word that it has reaped it (or its end: gone too)
            except OSError:
                pass
            self._conn.close()
        assert self.returncode is not None
        return self.returncode


def spawn_forked(
    argv: Sequence[str], env: dict[str, str], cwd: str | os.PathLike[str] | None, stdin: str, stderr: str,
    lifeline: Lifeline | None,
) -> ForkedProcess | None:  # fmt: skip
    """Ask the server named in ``env`` to fork ``argv`` (``python -m MODULE ARGS``); None when it cannot."""
    address = env.get(ENV)
    if not address or address == OFF or len(argv) < 3 or argv[0] != sys.executable or argv[1] != "-m":
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.settimeout(_REPLY_TIMEOUT_S)
        conn.connect(address)
    except OSError as exc:
        log.debug("warm-start server %s not reached (%s): starting the worker afresh", address, exc)
        conn.close()
        return None
    ours: list[int] = []  # our ends, closed if the server declines
    theirs: list[tuple[str, int]] = []  # the worker's ends, closed here once sent
    out_r, out_w = os.pipe()
    ours.append(out_r)
    in_w = None
    if stdin == "pipe":
        in_r, in_w = os.pipe()
        ours.append(in_w)
        theirs.append(("stdin", in_r))
    else:
        theirs.append(("stdin", os.open(os.devnull, os.O_RDONLY)))
    theirs.append(("stdout", out_w))
    err_r = None
    if stderr == "stdout":
        theirs.append(("stderr", os.dup(out_w)))
    elif stderr == "pipe":
        err_r, err_w = os.pipe()
        ours.append(err_r)
        theirs.append(("stderr", err_w))
    else:
        theirs.append(("stderr", os.open(os.devnull, os.O_WRONLY)))
    child_env = dict(env)
    if lifeline is not None:
        theirs.append((LIFELINE_ENV, lifeline.read_fd))
    import neffbench

    request = {
        "executable": sys.executable,
        "neffbench": str(neffbench.__file__),
        "module": argv[2],
        "args": list(argv[3:]),
        "env": child_env,
        "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
        "fd_roles": [role for role, _ in theirs],
    }
    try:
        socket.send_fds(conn, [json.dumps(request).encode()], [fd for _, fd in theirs])
        reply = json.loads(conn.recv(_MAX_MESSAGE) or b"{}")
    except (OSError, ValueError) as exc:
        reply = {"declined": f"no answer ({exc})"}
    finally:
        for role, fd in theirs:
            if role != LIFELINE_ENV:  # the lifeline's read end is closed by its owner (Lifeline.started)
                os.close(fd)
    if "pid" not in reply:
        log.info("warm-start server declined %s: %s", argv[2], reply.get("declined", "no answer"))
        conn.close()
        for fd in ours:
            os.close(fd)
        return None
    conn.settimeout(None)
    return ForkedProcess(
        conn,
        int(reply["pid"]),
        os.fdopen(in_w, "wb") if in_w is not None else None,
        os.fdopen(out_r, "rb"),
        os.fdopen(err_r, "rb") if err_r is not None else None,
    )
