"""The remote-display core without servers: display kinds, Qt's variables, secrets on disk, sockets, the
printed tunnel, stale folders and the doctor's display report."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from neffbench.remote import display, private, sockets
from neffbench.remote.display import install_command, package_manager, qt_environment, situation
from tests.cli import neffbench

SSH = {"SSH_CONNECTION": "203.0.113.7 50000 172.31.5.6 22"}


@pytest.mark.parametrize(
    ("env", "kind"),
    [
        ({"DISPLAY": ":0"}, "local"),
        ({"DISPLAY": "unix:1"}, "local"),
        ({"DISPLAY": "localhost:10.0", **SSH}, "forwarded"),
        ({"DISPLAY": "laptop.lan:0"}, "network"),
        ({**SSH}, "none"),
        ({}, "none"),
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "wayland"),
        ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, "offscreen"),
        ({"DISPLAY": "/private/tmp/com.apple.launchd.x/org.xquartz:0"}, "local"),
    ],
)
def test_the_kind_of_display(env, kind):
    assert situation(env, manager="apt").kind == kind


def test_over_ssh_without_forwarding_says_how_to_get_a_window():
    fixes = " ".join(situation(SSH, manager="apt").fixes)
    assert "ssh -X" in fixes and "X11Forwarding yes" in fixes and "neffbench remote" in fixes


def test_missing_tools_come_with_the_command_that_installs_them(monkeypatch):
    monkeypatch.setattr(display.shutil, "which", lambda name: None if name == "x11vnc" else f"/usr/bin/{name}")
    where = situation({"DISPLAY": ":0"}, manager="apt")
    assert where.tools["x11vnc"] is None and where.tools["Xvfb"] == "/usr/bin/Xvfb"
    assert where.fixes == ["`neffbench remote` needs x11vnc: sudo apt-get install -y x11vnc"]


def test_install_commands_for_ubuntu_and_amazon_linux(tmp_path):
    release = tmp_path / "os-release"
    for text, manager in [
        ('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n', "apt"),
        ('ID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n', "yum"),
        ('ID="amzn"\nID_LIKE="fedora"\nVERSION_ID="2023"\n', "dnf"),
    ]:
        release.write_text(text)
        assert package_manager(release) == manager
    assert package_manager(tmp_path / "none") == "apt"
    assert install_command(["Xvfb", "x11vnc"], "apt") == "sudo apt-get install -y xvfb x11vnc"
    assert install_command(["Xvfb"], "dnf") == "sudo dnf install -y xorg-x11-server-Xvfb"
    assert (
        install_command(["x11vnc"], "yum") == "sudo amazon-linux-extras install -y epel && sudo yum install -y x11vnc"
    )


def test_qt_is_told_no_shared_memory_and_no_gl_on_a_forwarded_display_only():
    assert qt_environment({"DISPLAY": "localhost:10.0"}) == {"QT_X11_NO_MITSHM": "1", "QT_XCB_GL_INTEGRATION": "none"}
    assert qt_environment({"DISPLAY": ":0"}) == {}
    assert qt_environment({"DISPLAY": "localhost:10.0", "QT_XCB_GL_INTEGRATION": "glx"}) == {"QT_X11_NO_MITSHM": "1"}
    env = {"DISPLAY": "localhost:10.0"}
    assert display.apply_qt_environment(env) and env["QT_X11_NO_MITSHM"] == "1"


def test_secrets_are_0600_files_in_a_0700_folder(tmp_path):
    folder = private.make_session_dir(tmp_path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    password = private.new_password()
    assert len(password) == private.PASSWORD_LENGTH and password.isalnum()
    path = private.write_password(folder, password)
    assert path.read_text() == password + "\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):  # never over an existing file (or a planted symlink)
        private.write_password(folder, "another")
    (folder / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        private.write_secret(folder / "link", b"x")
    assert not (tmp_path / "elsewhere").exists()
    assert len({private.new_password() for _ in range(50)}) == 50


def test_the_x_cookie_matches_any_display(tmp_path):
    path = private.write_xauthority(tmp_path / "xauth", b"\x01" * 16)
    data = path.read_bytes()
    assert struct.unpack(">H", data[:2])[0] == 0xFFFF and data.endswith(b"\x01" * 16)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    if shutil.which("xauth"):
        listed = subprocess.run(["xauth", "-f", str(path), "list"], capture_output=True, text=True, check=True)
        assert "MIT-MAGIC-COOKIE-1" in listed.stdout and "01" * 16 in listed.stdout


def test_a_dead_owners_folder_is_swept_and_a_live_one_kept(tmp_path):
    mine = private.make_session_dir(tmp_path)
    dead = tmp_path / (private.PREFIX + "dead")
    dead.mkdir(mode=0o700)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    (dead / private.OWNER_FILE).write_text(f"{child.pid} 1\n")
    assert private.sweep_stale(tmp_path) == [dead]
    assert mine.exists() and not dead.exists()


def test_runtime_root_is_xdg_runtime_dir_when_it_is_ours(tmp_path):
    assert private.runtime_root({"XDG_RUNTIME_DIR": str(tmp_path)}) == tmp_path
    assert private.runtime_root({"XDG_RUNTIME_DIR": str(tmp_path / "missing")}) != tmp_path / "missing"


def test_listening_sockets_are_read_from_the_kernel_with_their_address():
    with socket.socket() as loop, socket.socket() as every:
        loop.bind(("127.0.0.1", 0))
        loop.listen()
        every.bind(("0.0.0.0", 0))
        every.listen()
        found = {s.port: s for s in sockets.listening([os.getpid()])}
        lport, eport = loop.getsockname()[1], every.getsockname()[1]
        assert found[lport].address == "127.0.0.1" and found[lport].loopback
        assert found[eport].address == "0.0.0.0" and not found[eport].loopback
        assert lport not in list(sockets.free_vnc_ports(lport, 1))


def test_the_printed_tunnel_and_viewer_address(tmp_path):
    from neffbench.remote.session import Ready, instructions, ssh_target

    assert ssh_target(SSH)[0].endswith("@172.31.5.6") and ssh_target(SSH)[1] == ""
    assert ssh_target({"SSH_CONNECTION": "1.2.3.4 5 10.0.0.2 2222"})[1] == " -p 2222"

    class _Session:
        password = "Abc23xyz"
        password_file = tmp_path / "vnc-password"
        ready = Ready(":3", 5902, {})

    text = instructions(_Session(), SSH)  # type: ignore[arg-type]
    assert "ssh -L 5903:127.0.0.1:5902 " in text and "localhost:5903" in text
    assert text.count("Abc23xyz") == 1 and "127.0.0.1:5902 only" in text
    assert "@dev.example.com" in instructions(_Session(), SSH, host="dev.example.com")  # type: ignore[arg-type]


def test_doctor_reports_the_display_situation(capsys):
    from neffbench.cli.doctor_cmd import _print_display

    proc = neffbench("doctor", "--json", env={"DISPLAY": "localhost:10.0", "QT_QPA_PLATFORM": "", **SSH})
    where = json.loads(proc.stdout)["display_situation"]
    assert where["kind"] == "forwarded" and where["display"] == "localhost:10.0"
    assert set(where["tools"]) == {"Xvfb", "x11vnc", "xauth"}
    assert any("QT_X11_NO_MITSHM=1" in line for line in json.loads(proc.stdout)["advice"])
    _print_display(where)
    text = capsys.readouterr().out
    assert "forwarded X11 (ssh -X): localhost:10.0" in text and "x11vnc" in text


def test_a_bad_size_is_named():
    proc = neffbench("remote", "--size", "big")
    assert proc.returncode == 2 and "--size 'big'" in proc.stderr


def test_no_qt_in_the_remote_core():
    code = "import sys, neffbench.remote.session, neffbench.remote.supervisor; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd())
    assert out.stdout.strip() == "False"
