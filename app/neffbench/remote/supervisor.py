"""The child that owns one remote session: Xvfb, x11vnc and the window, all in its own process group.

``neffbench remote`` starts it with :func:`neffbench.procs.spawn`, so it leads a new process group and
holds a lifeline: however ``neffbench remote`` ends (Ctrl-C, SIGKILL, the SSH session that ran it
closing), :func:`neffbench.procs.watch` kills this group, and every server and the window with it. When
the window closes (File > Quit), it stops the servers and exits with the window's code.

It speaks the line protocol on stdout: ``ready`` (display, port, pids) or ``failed`` (message), then
``ended`` (what ended first and its code). The window's own output goes to the same pipe, so its
messages reach the terminal of ``neffbench remote``; the servers' chatter goes to the session log.

Run as ``python -m neffbench.remote.supervisor SESSION_DIR [--size WxH]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from neffbench.procs import Emitter, watch
from neffbench.remote.display import FILL_SCREEN_ENV
from neffbench.remote.private import PASSWORD_FILE, XAUTHORITY_FILE
from neffbench.remote.servers import ServerError, Xvfb, start_x11vnc, start_xvfb
from neffbench.remote.sockets import free_vnc_ports

LOG_FILE = "session.log"
STOP_GRACE_S = 3.0


def window_env(xvfb: Xvfb) -> dict[str, str]:
    """The window's environment: our own, on the private display, on Qt's X11 platform."""
    env = {k: v for k, v in os.environ.items() if k != "WAYLAND_DISPLAY"}
    env.update(xvfb.env())
    # The caller's QT_QPA_PLATFORM may be offscreen (a test run's is): this window must be a real one.
    env["QT_QPA_PLATFORM"] = "xcb"
    env[FILL_SCREEN_ENV] = "1"
    return env


def _stop(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for popen in children.values():
        if popen.poll() is None:
            popen.terminate()
    for popen in children.values():
        try:
            popen.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()


def _first_to_end(children: dict[str, subprocess.Popen[bytes]]) -> tuple[str, int]:
    while True:
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)  # blocks until one has exited; reaps none
        except ChildProcessError:
            pass
        for name, popen in children.items():
            code = popen.poll()
            if code is not None:
                return name, code


def run(folder: Path, size: str, emitter: Emitter) -> int:
    children: dict[str, subprocess.Popen[bytes]] = {}
    log_fd = os.open(folder / LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with open(log_fd, "ab", buffering=0) as log:
        try:
            xvfb = start_xvfb(folder / XAUTHORITY_FILE, size, log)
            children["Xvfb"] = xvfb.popen
            vnc = start_x11vnc(xvfb, folder / PASSWORD_FILE, free_vnc_ports(), log)
            children["x11vnc"] = vnc.popen
            children["window"] = subprocess.Popen(
                [sys.executable, "-m", "neffbench"], env=window_env(xvfb), stdin=subprocess.DEVNULL
            )
        except (ServerError, OSError) as exc:
            _stop(children)
            emitter.event({"type": "failed", "message": str(exc)})
            return 1
        pids = {name: popen.pid for name, popen in children.items()}
        emitter.event({"type": "ready", "display": xvfb.display, "port": vnc.port, "pids": pids})
        name, code = _first_to_end(children)
        _stop(children)
    emitter.event({"type": "ended", "which": name, "code": code})
    return code if name == "window" else 1


def main(argv: list[str] | None = None) -> int:
    watch()
    parser = argparse.ArgumentParser(prog="python -m neffbench.remote.supervisor")
    parser.add_argument("session_dir", type=Path)
    parser.add_argument("--size", default="1600x1000")
    args = parser.parse_args(argv)
    return run(args.session_dir, args.size, Emitter())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
