"""Starting the two servers of a remote session: Xvfb on a display number it picks itself, and x11vnc on
a free port of 127.0.0.1, told its password by file and checked from its listening sockets.

They are started as plain children of the caller, in its process group: the session's supervisor leads
that group, and its lifeline takes the whole group with it.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from neffbench.remote.sockets import listening

START_TIMEOUT_S = 15.0
# x11vnc exits at once when its port was taken between our probe and its bind: try the next few.
_PORT_TRIES = 20


class ServerError(RuntimeError):
    """A server could not be started; the message says which and why."""


@dataclass
class Xvfb:
    popen: subprocess.Popen[bytes]
    number: int
    xauthority: Path

    @property
    def display(self) -> str:
        return f":{self.number}"

    def env(self) -> dict[str, str]:
        """What a client of this display needs in its environment."""
        return {"DISPLAY": self.display, "XAUTHORITY": str(self.xauthority)}


@dataclass
class VncServer:
    popen: subprocess.Popen[bytes]
    port: int


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        from neffbench.remote.display import install_command

        raise ServerError(f"{name} is not installed; install it with: {install_command([name])}")
    return path


def _read_line(fd: int, wanted: str, deadline: float) -> tuple[str, str | None]:
    """What ``fd`` gave, and its first whole line starting with ``wanted`` (None: the stream ended or time ran out)."""
    text = ""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(0.1):
                continue
            data = os.read(fd, 4096)
            if not data:
                break
            text += data.decode("utf-8", "replace")
            for line in text.split("\n")[:-1]:
                if line.startswith(wanted):
                    return text, line
    return text, None


def _stop(popen: subprocess.Popen[bytes]) -> None:
    popen.kill()
    popen.wait()


def start_xvfb(xauthority: Path, size: str, log: IO[bytes] | None = None) -> Xvfb:
    """Xvfb on the first free display (``-displayfd``: no number to guess, no race with another session),
    accepting only clients that hold the cookie in ``xauthority``, listening on no TCP port."""
    read_end, write_end = os.pipe()
    argv = [_tool("Xvfb"), "-displayfd", str(write_end), "-auth", str(xauthority), "-nolisten", "tcp"]
    argv += ["-noreset", "-screen", "0", f"{size}x24"]
    try:
        popen = subprocess.Popen(argv, pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    finally:
        os.close(write_end)
    try:
        _, line = _read_line(read_end, "", time.monotonic() + START_TIMEOUT_S)
    finally:
        os.close(read_end)
    if line is None or not line.strip().isdigit():
        _stop(popen)
        raise ServerError(f"Xvfb did not start (it said no display number within {START_TIMEOUT_S:g} s)")
    return Xvfb(popen, int(line), xauthority)


def _drain(stream: IO[bytes], log: IO[bytes] | None) -> None:
    for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
        if log is not None:
            log.write(chunk)
            log.flush()


def start_x11vnc(xvfb: Xvfb, password_file: Path, ports: Iterable[int], log: IO[bytes] | None = None) -> VncServer:
    """x11vnc showing ``xvfb``, on the first of ``ports`` it can bind on 127.0.0.1, with the password in
    ``password_file``; refused (and stopped) unless every socket it listens on is a loopback one."""
    tool = _tool("x11vnc")
    for tries, port in enumerate(ports):
        if tries >= _PORT_TRIES:
            break
        argv = [tool, "-display", xvfb.display, "-auth", str(xvfb.xauthority), "-rfbport", str(port)]
        # -localhost binds 127.0.0.1 only; -noipv6 keeps it off ::, which -localhost does not cover.
        argv += ["-localhost", "-noipv6", "-passwdfile", str(password_file), "-forever", "-shared"]
        # Nobody with access to the display may reconfigure the server or make it run commands.
        argv += ["-noremote", "-nocmds", "-quiet"]
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
        assert popen.stdout is not None
        text, found = _read_line(popen.stdout.fileno(), f"PORT={port}", time.monotonic() + START_TIMEOUT_S)
        if log is not None:
            log.write(text.encode())
        if found is None:
            _stop(popen)
            continue
        threading.Thread(target=_drain, args=(popen.stdout, log), name="x11vnc-output", daemon=True).start()
        sockets = listening([popen.pid])
        exposed = [s for s in sockets if not s.loopback]
        if exposed or not any(s.port == port for s in sockets):
            _stop(popen)
            where = ", ".join(f"{s.address}:{s.port}" for s in exposed) or "no socket found"
            raise ServerError(f"x11vnc listened beyond 127.0.0.1 ({where}): stopped it")
        return VncServer(popen, port)
    raise ServerError("x11vnc could not listen on any free port of 127.0.0.1 from 5900 on (see the session log)")
