"""What kind of display this process has (local, forwarded X11, none), what Qt needs on a forwarded one,
and the command that installs each missing piece on Ubuntu and Amazon Linux."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neffbench.remote import xcb
from neffbench.remote.packages import INSTALL

# Set by ``neffbench remote`` for its window: on a display without a window manager nobody can move or
# resize the window, so it takes the whole virtual screen.
FILL_SCREEN_ENV = "NEFFBENCH_FILL_SCREEN"

# Over a network display Qt's shared-memory images cannot reach the X server (another machine) and
# GLX goes through indirect rendering or fails; the workbench draws with QPainter and needs neither.
NETWORK_DISPLAY_QT_ENV = {"QT_X11_NO_MITSHM": "1", "QT_XCB_GL_INTEGRATION": "none"}

# What provides each tool, per family of distribution (told from /etc/os-release).
_PACKAGES = {
    "Xvfb": {"apt": "xvfb", "yum": "xorg-x11-server-Xvfb", "dnf": "xorg-x11-server-Xvfb"},
    "x11vnc": {"apt": "x11vnc", "yum": "x11vnc", "dnf": "x11vnc"},
    "xauth": {"apt": "xauth", "yum": "xorg-x11-xauth", "dnf": "xauth"},
}
# Amazon Linux 2 has x11vnc in EPEL only.
_EPEL_AL2 = "sudo amazon-linux-extras install -y epel && "


@dataclass(frozen=True)
class DisplaySituation:
    """``kind``: local, forwarded (X11 over SSH), network (an X server elsewhere), wayland, offscreen or none."""

    kind: str
    display: str | None
    over_ssh: bool
    tools: dict[str, str | None] = field(default_factory=dict)  # Xvfb, x11vnc, xauth: their paths or None
    fixes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def x11_host(display: str) -> str:
    """The host part of an X11 display name: "" for ``:0`` and ``unix:0``, ``localhost`` for ``localhost:10.0``."""
    if display.startswith("/"):  # macOS launchd sockets, /private/tmp/...:0, are local
        return ""
    host = display.rpartition(":")[0]
    return "" if host in ("", "unix") else host


def is_network_display(display: str | None) -> bool:
    """Whether X11 requests travel over TCP (ssh -X's ``localhost:10.0``), where MIT-SHM cannot work."""
    return bool(display) and bool(x11_host(display or ""))


def repaints_cross_a_network(env: Mapping[str, str]) -> bool:
    """Whether every repaint is sent over a network: a forwarded (or other TCP) X display, or the VNC-served
    display of ``neffbench remote``. The window then keeps still when idle: no blinking caret."""
    return is_network_display(env.get("DISPLAY")) or bool(env.get(FILL_SCREEN_ENV))


def qt_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables Qt needs for the display in ``env`` that ``env`` does not set already."""
    if not is_network_display(env.get("DISPLAY")):
        return {}
    return {k: v for k, v in NETWORK_DISPLAY_QT_ENV.items() if k not in env}


def apply_qt_environment(env: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set :func:`qt_environment` in ``env`` (default ours, before Qt starts); returns what it set."""
    target = os.environ if env is None else env
    added = qt_environment(target)
    target.update(added)
    return added


def package_manager(os_release: Path = Path("/etc/os-release")) -> str:
    """apt, yum (Amazon Linux 2) or dnf (Amazon Linux 2023, Fedora, RHEL), told from os-release; apt if unknown."""
    try:
        fields = dict(line.split("=", 1) for line in os_release.read_text(encoding="utf-8").splitlines() if "=" in line)
    except OSError:
        return "apt"
    ids = {fields.get("ID", "").strip('"'), *fields.get("ID_LIKE", "").strip('"').split()}
    if "amzn" in ids:
        return "yum" if fields.get("VERSION_ID", "").strip('"') == "2" else "dnf"
    if ids & {"fedora", "rhel", "centos"}:
        return "dnf"
    return "apt"


def install_command(tools: list[str], manager: str | None = None) -> str:
    """The one command that installs ``tools`` (names from :data:`_PACKAGES`) with this host's package manager."""
    manager = manager or package_manager()
    packages = " ".join(_PACKAGES[t][manager] for t in tools)
    command = INSTALL[manager].format(packages)
    return (_EPEL_AL2 + command) if manager == "yum" and "x11vnc" in tools else command


def _kind(env: Mapping[str, str]) -> tuple[str, str | None]:
    platform_name = env.get("QT_QPA_PLATFORM", "")
    if platform_name.startswith(("offscreen", "minimal")):
        return "offscreen", f"QT_QPA_PLATFORM={platform_name}"
    if env.get("WAYLAND_DISPLAY"):
        return "wayland", env["WAYLAND_DISPLAY"]
    display = env.get("DISPLAY")
    if not display:
        return "none", None
    if is_network_display(display):
        return ("forwarded" if _over_ssh(env) else "network"), display
    return "local", display


def _over_ssh(env: Mapping[str, str]) -> bool:
    return bool(env.get("SSH_CONNECTION") or env.get("SSH_CLIENT"))


def situation(env: Mapping[str, str] | None = None, manager: str | None = None) -> DisplaySituation:
    """Where a window of this process would appear, the tools for the other ways, and how to fix what is missing."""
    env = os.environ if env is None else env
    kind, display = _kind(env)
    tools = {name: shutil.which(name) for name in ("Xvfb", "x11vnc", "xauth")}
    missing_vnc = [t for t in ("Xvfb", "x11vnc") if not tools[t]]
    fixes = []
    if kind == "forwarded":
        fixes.append(
            "X11 forwarding: the workbench turns off MIT-SHM and OpenGL for it (QT_X11_NO_MITSHM=1, "
            "QT_XCB_GL_INTEGRATION=none); on a slow link `neffbench remote` (VNC) is often quicker."
        )
    elif kind == "none" and _over_ssh(env):
        fixes.append(
            "Over SSH without X11 forwarding: reconnect with `ssh -X` (the laptop needs an X server, e.g. "
            "XQuartz on macOS; this box needs xauth and `X11Forwarding yes` in /etc/ssh/sshd_config)"
            + ("" if tools["xauth"] else f", install xauth with `{install_command(['xauth'], manager)}`")
            + ", or run `neffbench remote` and view the window over an SSH tunnel with VNC."
        )
    if why := xcb.problem({**env, "QT_QPA_PLATFORM": "xcb"}):  # the window on X11, over ssh -X and in remote
        fixes.append(why[0].upper() + why[1:])
    if missing_vnc:
        fixes.append(f"`neffbench remote` needs {' and '.join(missing_vnc)}: {install_command(missing_vnc, manager)}")
    return DisplaySituation(kind, display, _over_ssh(env), tools, fixes)
