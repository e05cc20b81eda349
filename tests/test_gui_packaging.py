"""Desktop integration: the launcher, its metainfo and icon install, and the window matches the launcher."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from neffbench.bundled import resource_path

REPO = Path(__file__).resolve().parents[1]
PACKAGING = REPO / "packaging"


def test_install_desktop_puts_launcher_icon_and_metainfo_in_place(tmp_path):
    exe = tmp_path / "venv" / "bin" / "neffbench"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    data = tmp_path / "share"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    proc = subprocess.run(
        ["bash", str(PACKAGING / "install-desktop.sh"), str(exe)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str
    desktop.read(data / "applications" / "neffbench.desktop")
    entry = desktop["Desktop Entry"]
    assert entry["Exec"] == f'"{exe}"'
    assert entry["Icon"] == "neffbench" and entry["StartupWMClass"] == "neffbench"
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "neffbench.svg").is_file()
    assert (data / "metainfo" / "io.github.neffbench.NeffBench.metainfo.xml").is_file()


def test_install_desktop_refuses_a_missing_executable(tmp_path):
    proc = subprocess.run(
        ["bash", str(PACKAGING / "install-desktop.sh"), str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0 and "make setup" in proc.stderr


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-validate is not installed")
def test_desktop_file_is_valid():
    subprocess.run(["desktop-file-validate", str(PACKAGING / "neffbench.desktop")], check=True, timeout=60)


@pytest.mark.skipif(not shutil.which("appstreamcli"), reason="appstreamcli is not installed")
def test_metainfo_is_valid():
    subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(PACKAGING / "io.github.neffbench.NeffBench.metainfo.xml")],
        check=True,
        timeout=60,
        capture_output=True,
    )


@pytest.mark.gui
def test_window_icon_and_desktop_file_name_match_the_launcher(qapp):
    from neffbench.gui.shell.launch import DESKTOP_FILE, make_app
    from neffbench.gui.shell.main_window import app_icon

    assert resource_path("icons", "neffbench.svg").is_file()
    assert not app_icon().isNull()
    app = make_app()
    assert app.desktopFileName() == DESKTOP_FILE
    assert (PACKAGING / f"{DESKTOP_FILE}.desktop").is_file()
    metainfo = (PACKAGING / "io.github.neffbench.NeffBench.metainfo.xml").read_text()
    assert f'<launchable type="desktop-id">{DESKTOP_FILE}.desktop</launchable>' in metainfo
