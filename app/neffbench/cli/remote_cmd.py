"""``neffbench remote``: the window on a private display, seen from a laptop with VNC through an SSH tunnel."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from types import FrameType


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "remote",
        help="open the window on a private display and show it with VNC on 127.0.0.1 (for a box reached by SSH)",
        description="Start a private virtual display (Xvfb), the workbench window on it, and a VNC server "
        "(x11vnc) that listens on 127.0.0.1 only, with a password made for this session; print the SSH "
        "tunnel and VNC viewer address to use from your laptop. Quitting the window, Ctrl-C, or the SSH "
        "session ending stops all of it.",
    )
    p.add_argument("--size", default="1600x1000", help="the virtual screen's size, WIDTHxHEIGHT (default 1600x1000)")
    p.add_argument(
        "--ssh-host",
        metavar="NAME",
        help="the name or address your laptop reaches this box by, for the printed ssh command "
        "(default: the address this SSH session came in on)",
    )
    p.set_defaults(func=run)


def _size(text: str) -> str | None:
    match = re.fullmatch(r"(\d{3,5})x(\d{3,5})", text)
    return text if match and int(match[1]) >= 640 and int(match[2]) >= 480 else None


def _end_quietly(signum: int, frame: FrameType | None) -> None:
    # SIGTERM and SIGHUP (the terminal gone) end the wait like Ctrl-C, so that the session is stopped and
    # its folder removed; a SIGKILL is the lifeline's business.
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    from neffbench.remote.session import RemoteError, RemoteSession, instructions

    size = _size(args.size)
    if size is None:
        print(f"neffbench remote: --size {args.size!r} is not WIDTHxHEIGHT of at least 640x480", file=sys.stderr)
        return 2
    from neffbench.remote.xcb import problem

    if why := problem({**os.environ, "QT_QPA_PLATFORM": "xcb"}):  # the window on the private display is xcb's
        print(f"neffbench remote: {why}", file=sys.stderr)
        return 1
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _end_quietly)
    print("neffbench remote: starting Xvfb, x11vnc and the window...", file=sys.stderr, flush=True)
    try:
        session = RemoteSession.start(size=size)
    except RemoteError as exc:
        print(f"neffbench remote: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    try:
        print(instructions(session, host=args.ssh_host), flush=True)
        code = session.wait()
    except KeyboardInterrupt:
        code = 130
    finally:
        session.stop()
    ended = session.ended or {}
    if ended.get("which") not in (None, "window"):
        print(
            f"neffbench remote: {ended['which']} ended (code {ended.get('code')}); stopped the rest.", file=sys.stderr
        )
        return 1
    try:
        print("neffbench remote: session over; the display and the VNC server are stopped.", file=sys.stderr)
    except OSError:
        pass
    return code
