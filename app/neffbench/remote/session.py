"""``neffbench remote``'s side of a session: the private folder and its secrets, the supervisor child, the
wait for the end (the window closed, Ctrl-C, the terminal gone) and the cleaning up after it."""

from __future__ import annotations

import getpass
import os
import queue
import select
import shutil
import socket
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.procs import Child, parse_event, pump, spawn
from neffbench.remote.private import (
    PASSWORD_FILE,
    XAUTHORITY_FILE,
    make_session_dir,
    new_password,
    sweep_stale,
    write_password,
    write_xauthority,
)
from neffbench.remote.supervisor import LOG_FILE

START_TIMEOUT_S = 60.0
STOP_GRACE_S = 3.0
_HANGUP = select.POLLHUP | select.POLLERR | select.POLLNVAL


class RemoteError(RuntimeError):
    """The session could not start; the message says why."""


@dataclass(frozen=True)
class Ready:
    display: str
    port: int
    pids: dict[str, int]


class RemoteSession:
    """A running session. :meth:`start` makes one; :meth:`wait` blocks until it ends; :meth:`stop` ends it."""

    def __init__(self, folder: Path, password: str, child: Child, on_text: Callable[[str], None]):
        self.folder = folder
        self.password = password
        self.child = child
        self.ready: Ready | None = None
        self.ended: dict[str, Any] | None = None
        self._on_text = on_text
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="neffbench-remote-reader", daemon=True)
        self._reader.start()

    @property
    def password_file(self) -> Path:
        return self.folder / PASSWORD_FILE

    @classmethod
    def start(
        cls,
        *,
        size: str = "1600x1000",
        root: Path | None = None,
        on_text: Callable[[str], None] | None = None,
        timeout: float = START_TIMEOUT_S,
    ) -> RemoteSession:
        """Start Xvfb, x11vnc and the window; returns once the VNC server listens. RemoteError if one cannot start."""
        sweep_stale(root)
        folder = make_session_dir(root)
        password = new_password()
        write_password(folder, password)
        write_xauthority(folder / XAUTHORITY_FILE)
        argv = [sys.executable, "-m", "neffbench.remote.supervisor", str(folder), "--size", size]
        try:
            child = spawn(argv, stderr="stdout")
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise RemoteError(f"could not start the session: {exc}") from exc
        session = cls(folder, password, child, on_text or _to_stderr)
        try:
            session._await_ready(timeout)
        except BaseException:
            session.stop()
            raise
        return session

    def _read(self) -> None:
        def on_line(line: str) -> None:
            event = parse_event(line)
            if event is not None:
                self._events.put(event)
            else:
                try:
                    self._on_text(line)
                except OSError:  # the terminal has gone: the session is ending anyway
                    pass

        pump(self.child, on_line)
        self._events.put(None)

    def _await_ready(self, timeout: float) -> None:
        try:
            event = self._events.get(timeout=timeout)
        except queue.Empty:
            raise RemoteError(f"the session did not start within {timeout:g} s{self._log_tail()}") from None
        if event is None or event["type"] != "ready":
            why = event["message"] if event is not None and event["type"] == "failed" else "the session ended"
            raise RemoteError(f"{why}{self._log_tail()}")
        self.ready = Ready(str(event["display"]), int(event["port"]), dict(event["pids"]))

    def _log_tail(self, lines: int = 15) -> str:
        try:
            text = (self.folder / LOG_FILE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        tail = text.strip().splitlines()[-lines:]
        return ("\n  session log:\n    " + "\n    ".join(tail)) if tail else ""

    def wait(self, hangup_fds: Sequence[int] = (1, 2), poll_s: float = 0.25) -> int:
        """Block until the session ends (the window closed) or one of ``hangup_fds`` hangs up (the SSH
        connection dropped without a terminal to send SIGHUP); returns the window's exit code."""
        watcher = select.poll()
        for fd in hangup_fds:
            watcher.register(fd, 0)  # hang-ups and errors are always reported
        while True:
            try:
                event = self._events.get(timeout=poll_s)
            except queue.Empty:
                if any(flags & _HANGUP for _, flags in watcher.poll(0)):
                    return 129  # as for SIGHUP
                continue
            if event is None:
                return 0 if self.ended is None else int(self.ended.get("code", 1))
            if event["type"] == "ended":
                self.ended = event

    def stop(self) -> None:
        """End everything of the session (TERM, then KILL after a grace period) and remove its folder."""
        if not self.child.reaped:
            self.child.terminate(STOP_GRACE_S)
            self.child.reap(STOP_GRACE_S + 5.0)
        self._reader.join(timeout=5.0)
        shutil.rmtree(self.folder, ignore_errors=True)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def ssh_target(env: Mapping[str, str] | None = None, host: str | None = None) -> tuple[str, str]:
    """``user@host`` for the laptop's ssh command and extra options (``-p PORT``), from this SSH session."""
    env = os.environ if env is None else env
    fields = env.get("SSH_CONNECTION", "").split()
    server, port = (fields[2], fields[3]) if len(fields) == 4 else (socket.gethostname(), "22")
    options = f" -p {port}" if port != "22" else ""
    return f"{getpass.getuser()}@{host or server}", options


def tunnel_port(remote_port: int) -> int:
    """The laptop's end of the tunnel: 5901 for 5900 and so on, off 5900, where the laptop's own screen
    sharing (macOS) may listen."""
    return remote_port + 1


def instructions(session: RemoteSession, env: Mapping[str, str] | None = None, host: str | None = None) -> str:
    """What to type on the laptop, with the password: printed once, at the start."""
    assert session.ready is not None
    ready = session.ready
    target, options = ssh_target(env, host)
    local = tunnel_port(ready.port)
    env = os.environ if env is None else env
    if host:
        came_in = ""
    elif env.get("SSH_CONNECTION"):
        came_in = " (the address this SSH session came in on: if your laptop knows this box by another, use that)"
    else:
        came_in = " (this box's host name: use the name or address your laptop reaches it by)"
    return "\n".join(
        [
            f"The workbench runs on a private display ({ready.display}), shown by a VNC server that listens on "
            f"127.0.0.1:{ready.port} only.",
            "",
            "On your laptop, open a tunnel to it (and leave it open):",
            f"    ssh{options} -L {local}:127.0.0.1:{ready.port} {target}",
            f"  with the key and options you use to reach this box{came_in}.",
            f"Then point a VNC viewer at localhost:{local} (macOS: open vnc://localhost:{local}; "
            f"TigerVNC: vncviewer localhost:{local}).",
            f"VNC password for this session: {session.password}",
            f"  (shown only here; until the session ends it is also in {session.password_file}, readable only by you)",
            "",
            "The session ends, and everything it started with it, when you quit the window (File > Quit, Ctrl+Q), "
            "press Ctrl-C here, or this SSH session closes.",
        ]
    )
