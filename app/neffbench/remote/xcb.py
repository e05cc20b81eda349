"""Whether Qt's xcb platform plugin (the window on X11: a local display, ``ssh -X``, ``neffbench remote``) can load
here, and if not, the system package that is missing.

Qt itself finds out only while QApplication starts, then aborts the process with a core dump (exit 134); a server
image such as the Deep Learning AMI's Ubuntu lacks ``libxcb-cursor0``, which the plugin needs from Qt 6.5.
Loading the plugin the way Qt will (the dynamic loader, its RUNPATH) asks the same question first, without Qt.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from neffbench.remote.packages import INSTALL

PLUGIN = "libqxcb.so"

# The libraries Qt's xcb plugin links (readelf -d libQt6XcbQpa.so.6), by name without its version, and the package
# holding each on Debian/Ubuntu (apt) and on Amazon Linux and Fedora (yum, dnf).
_PACKAGES = {
    "libxcb-cursor": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-util": ("libxcb-util1", "xcb-util"),
    "libxcb-image": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-randr": ("libxcb-randr0", "libxcb"),
    "libxcb-render": ("libxcb-render0", "libxcb"),
    "libxcb-shape": ("libxcb-shape0", "libxcb"),
    "libxcb-shm": ("libxcb-shm0", "libxcb"),
    "libxcb-sync": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb": ("libxcb-xkb1", "libxcb"),
    "libxcb": ("libxcb1", "libxcb"),
    "libxkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb": ("libx11-xcb1", "libX11-xcb"),
    "libX11": ("libx11-6", "libX11"),
    "libGL": ("libgl1", "mesa-libGL"),
    "libEGL": ("libegl1", "mesa-libEGL"),
    "libfontconfig": ("libfontconfig1", "fontconfig"),
    "libdbus-1": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0": ("libglib2.0-0", "glib2"),
}
_NOT_FOUND = re.compile(r"([^\s:/]+\.so[.\d]*): cannot open shared object file")


def uses_xcb(env: Mapping[str, str]) -> bool:
    """Whether Qt will start on its xcb platform: asked for by name, or by default on Linux with an X display."""
    platform_name = env.get("QT_QPA_PLATFORM", "")
    if platform_name:
        return platform_name.split(":")[0] == "xcb"
    wayland_session = bool(env.get("WAYLAND_DISPLAY")) and env.get("XDG_SESSION_TYPE") == "wayland"
    return sys.platform.startswith("linux") and bool(env.get("DISPLAY")) and not wayland_session


def plugin_path(env: Mapping[str, str]) -> Path | None:
    """The xcb plugin Qt will load: from QT_QPA_PLATFORM_PLUGIN_PATH as Qt looks there first, else PySide6's own."""
    if env.get("QT_QPA_PLATFORM_PLUGIN_PATH"):
        candidate = Path(env["QT_QPA_PLATFORM_PLUGIN_PATH"]) / PLUGIN
        if candidate.is_file():
            return candidate
    spec = importlib.util.find_spec("PySide6")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "Qt" / "plugins" / "platforms" / PLUGIN
        if candidate.is_file():
            return candidate
    return None


def load_error(plugin: Path) -> str | None:
    """What the dynamic loader says when the plugin cannot load (``libxcb-cursor.so.0: cannot open shared object
    file``), or None when it loads. Qt loads the same plugin moments later, so loading it here costs nothing."""
    try:
        ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY)
    except OSError as error:
        return str(error)
    return None


def package_for(library: str, manager: str) -> str | None:
    """The package that holds ``library`` (``libxcb-cursor.so.0`` -> ``libxcb-cursor0`` with apt), if known."""
    names = _PACKAGES.get(library.split(".so")[0])
    return None if names is None else names[0] if manager == "apt" else names[1]


def install_lines(library: str) -> list[str]:
    """The command that installs ``library`` on Ubuntu/Debian and on Amazon Linux, or nothing if unknown."""
    return [
        f"`{INSTALL[manager].format(package)}` ({where})"
        for where, manager in (("Ubuntu, Debian", "apt"), ("Amazon Linux 2023, Fedora", "dnf"))
        if (package := package_for(library, manager))
    ]


def problem(env: Mapping[str, str] | None = None) -> str | None:
    """One sentence naming what stops the window's xcb platform from loading here, or None."""
    env = os.environ if env is None else env
    plugin = plugin_path(env) if uses_xcb(env) else None
    error = load_error(plugin) if plugin else None
    if error is None:
        return None
    missing = _NOT_FOUND.search(error)
    if missing is None:
        return f"the window's X11 platform (Qt's xcb plugin) cannot load: {error}"
    library = missing.group(1)
    lines = install_lines(library)
    how = ("; install it with " + " or ".join(lines)) if lines else " (install the package that provides it)"
    return f"the window's X11 platform (Qt's xcb plugin) needs {library}, which this system lacks{how}."
