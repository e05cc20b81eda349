"""A missing library of Qt's xcb plugin is named in one sentence before Qt starts, not met with Qt's abort."""

from __future__ import annotations

from pathlib import Path

import pytest

from neffbench.remote import xcb
from tests.cli import neffbench

HIDDEN = b"libxcb-cursor.so.9\0"  # the same length as the real name, so the patched library stays valid ELF


@pytest.fixture
def plugin_without_xcb_cursor(tmp_path) -> Path:
    """A copy of PySide6's xcb plugin whose Qt library asks for a libxcb-cursor no system has: the plugin as it
    is on a server image without libxcb-cursor0, without touching the system's libraries."""
    plugin = xcb.plugin_path({})
    if plugin is None:
        pytest.skip("PySide6 has no xcb platform plugin here")
    qt_lib = plugin.parents[2] / "lib"
    platforms = tmp_path / "plugins" / "platforms"
    libs = tmp_path / "lib"  # the plugin's RUNPATH is $ORIGIN/../../lib
    platforms.mkdir(parents=True)
    libs.mkdir()
    (platforms / xcb.PLUGIN).write_bytes(plugin.read_bytes())
    for lib in qt_lib.iterdir():
        (libs / lib.name).symlink_to(lib)
    xcb_qpa = qt_lib / "libQt6XcbQpa.so.6"
    real = xcb_qpa.read_bytes()
    if real.count(b"libxcb-cursor.so.0\0") != 1:
        pytest.skip("this Qt's xcb plugin does not link libxcb-cursor")
    (libs / xcb_qpa.name).unlink()
    (libs / xcb_qpa.name).write_bytes(real.replace(b"libxcb-cursor.so.0\0", HIDDEN))
    return platforms


@pytest.mark.slow
def test_the_window_names_the_missing_package_instead_of_aborting(plugin_without_xcb_cursor, tmp_path):
    env = {"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":99", "QT_QPA_PLATFORM_PLUGIN_PATH": str(plugin_without_xcb_cursor)}
    done = neffbench(cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 1, done.stderr  # Qt's own ending is an abort, 134
    assert "needs libxcb-cursor.so.9, which this system lacks" in done.stderr
    assert "`sudo apt-get install -y libxcb-cursor0` (Ubuntu, Debian)" in done.stderr
    assert "`sudo dnf install -y xcb-util-cursor` (Amazon Linux 2023, Fedora)" in done.stderr
    assert "qt.qpa" not in done.stderr  # Qt never started


@pytest.mark.slow
def test_remote_and_doctor_say_the_same_before_starting_anything(plugin_without_xcb_cursor, tmp_path):
    env = {"QT_QPA_PLATFORM_PLUGIN_PATH": str(plugin_without_xcb_cursor)}
    remote = neffbench("remote", cwd=tmp_path, env=env, timeout=120)
    assert remote.returncode == 1 and "neffbench remote: the window's X11 platform" in remote.stderr
    assert "starting Xvfb" not in remote.stderr
    doctor = neffbench("doctor", cwd=tmp_path, env=env, timeout=120)
    assert "needs libxcb-cursor.so.9, which this system lacks" in doctor.stdout


def test_the_platform_qt_will_use():
    assert xcb.uses_xcb({"QT_QPA_PLATFORM": "xcb"})
    assert xcb.uses_xcb({"QT_QPA_PLATFORM": "xcb:nomitshm"})
    assert not xcb.uses_xcb({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"})
    assert not xcb.uses_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"})
    assert xcb.uses_xcb({"DISPLAY": "localhost:10.0"}) == xcb.sys.platform.startswith("linux")
    assert not xcb.uses_xcb({})


def test_each_library_the_plugin_links_has_its_package_on_both_families():
    assert xcb.package_for("libxcb-cursor.so.0", "apt") == "libxcb-cursor0"
    assert xcb.package_for("libxcb-icccm.so.4", "dnf") == "xcb-util-wm"
    assert xcb.package_for("libxkbcommon-x11.so.0", "apt") == "libxkbcommon-x11-0"
    assert xcb.package_for("libnothing.so.1", "apt") is None
    assert xcb.install_lines("libnothing.so.1") == []


def test_what_the_loader_says_is_passed_on_when_it_names_no_library(monkeypatch, tmp_path):
    assert "cannot open shared object file" in (xcb.load_error(tmp_path / xcb.PLUGIN) or "")
    monkeypatch.setattr(xcb, "plugin_path", lambda env: tmp_path / xcb.PLUGIN)
    monkeypatch.setattr(xcb, "load_error", lambda plugin: "undefined symbol: xcb_cursor_load")
    why = xcb.problem({"QT_QPA_PLATFORM": "xcb"})
    assert why == "the window's X11 platform (Qt's xcb plugin) cannot load: undefined symbol: xcb_cursor_load"
    assert xcb.problem({"QT_QPA_PLATFORM": "offscreen"}) is None


def test_make_runs_system_step_names_the_install_line_when_it_cannot_install(tmp_path):
    """Not root on an Ubuntu without libxcb-cursor0: the window's set-up says the exact lines for both families."""
    import os
    import subprocess

    from tests.cli import REPO

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fakes = {
        "dpkg-query": 'case "$*" in *libxcb-cursor0*) exit 1;; *) echo "install ok installed";; esac',
        "id": "echo 1000",
    }
    for name, body in fakes.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    done = subprocess.run(
        ["bash", str(REPO / "packaging" / "qt-system-deps.sh"), "--window"],
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "needs: sudo apt-get install -y libxcb-cursor0\n" in done.stdout
    assert "sudo dnf install -y xcb-util-cursor" in done.stdout
