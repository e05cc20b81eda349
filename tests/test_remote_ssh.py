"""The window over a real SSH connection: a throwaway sshd on 127.0.0.1 (its own host key, config and
authorized key), ``ssh -X`` into an Xvfb on the client side, and ``neffbench remote`` ended by the
connection dropping, with and without a terminal."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from neffbench.remote.private import write_xauthority
from neffbench.remote.servers import start_xvfb
from neffbench.remote.sockets import listening
from tests.processes import until
from tests.remote_helpers import (
    MARK_ENV,
    PREVIEW_SHARE,
    REPO,
    Sshd,
    free_port,
    marked_pids,
    new_mark,
    poll_until,
    require,
    saturated_share,
    wait_gone,
)

pytestmark = [pytest.mark.slow, pytest.mark.remote]

# What X11 errors from a shared-memory or GLX attempt over the forwarded display look like.
_X_TROUBLE = ("MIT-SHM", "XShm", "BadShmSeg", "BadAccess", "GLX", "qt.qpa.xcb: X server")


@pytest.fixture
def sshd(tmp_path):
    require("sshd", "ssh", "ssh-keygen", "xauth", "Xvfb")
    folder = tmp_path / "sshd"
    folder.mkdir()
    server = Sshd(folder, free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def client_display(tmp_path):
    """The laptop's X server: an Xvfb with a cookie of its own."""
    xauth = write_xauthority(tmp_path / "client.xauth")
    with open(tmp_path / "client-xvfb.log", "wb") as log:
        xvfb = start_xvfb(xauth, "1280x800", log)
    yield xvfb
    xvfb.popen.terminate()
    xvfb.popen.wait(120)


def _remote_command(tmp_path: Path, mark: str, *args: str) -> str:
    env = {
        MARK_ENV: mark,
        "XDG_RUNTIME_DIR": str(tmp_path / "runtime"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "QT_QPA_PLATFORM": "xcb",  # what a user's shell has: nothing, and Qt picks xcb
    }
    (tmp_path / "runtime").mkdir(mode=0o700, exist_ok=True)
    assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return f"cd {shlex.quote(str(tmp_path))} && env {assigns} {shlex.quote(sys.executable)} {' '.join(args)}"


def _screenshot(xvfb, out: Path) -> None:
    """The client display's root window, taken by a Qt client of that display."""
    code = (
        "import sys; from PySide6.QtGui import QGuiApplication; app = QGuiApplication([]); "
        "sys.exit(0 if app.primaryScreen().grabWindow(0).save(sys.argv[1]) else 1)"
    )
    env = {"PATH": "/usr/bin:/bin", **xvfb.env(), "QT_QPA_PLATFORM": "xcb"}
    subprocess.run([sys.executable, "-c", code, str(out)], env=env, timeout=30, check=True, capture_output=True)


def test_the_window_through_ssh_x_shows_the_preview_without_shm_or_gl(sshd, client_display, tmp_path):
    env = {"PATH": "/usr/bin:/bin", **client_display.env()}
    probe = (
        "-c 'import json, os; from neffbench.remote.display import situation, qt_environment; "
        "print(json.dumps([situation().kind, qt_environment(os.environ)]))'"
    )
    seen = subprocess.run(
        [*sshd.ssh_argv("-X"), _remote_command(tmp_path, new_mark(), probe)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert seen.returncode == 0, seen.stderr
    kind, qt_env = json.loads(seen.stdout.strip().splitlines()[-1])
    assert kind == "forwarded" and qt_env == {"QT_X11_NO_MITSHM": "1", "QT_XCB_GL_INTEGRATION": "none"}

    mark = new_mark()
    window = subprocess.Popen(
        [*sshd.ssh_argv("-X"), _remote_command(tmp_path, mark, "-m", "neffbench")],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    shot = tmp_path / "forwarded.png"
    try:

        def preview_shown() -> bool:
            assert window.poll() is None, window.communicate()[1]
            _screenshot(client_display, shot)
            return saturated_share(shot) > PREVIEW_SHARE

        poll_until(preview_shown, 120, "the preview's plots on the client's display")
        print(f"forwarded window: {shot}")
    finally:
        window.terminate()  # the connection closes; the window loses its display and ends
        _, err = window.communicate(timeout=120)
    assert not [line for line in err.splitlines() if any(t in line for t in _X_TROUBLE)], err
    wait_gone(mark)


def _drain(stream, lines: list[str]) -> None:
    for line in stream:
        lines.append(line)


@pytest.mark.parametrize("terminal", ["-tt", "-T"], ids=["with-a-terminal", "without-a-terminal"])
def test_neffbench_remote_ends_when_the_ssh_connection_drops(sshd, tmp_path, terminal):
    require("x11vnc")
    mark = new_mark()
    ssh = subprocess.Popen(
        [*sshd.ssh_argv(terminal), _remote_command(tmp_path, mark, "-m", "neffbench", "remote", "--size", "1024x768")],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=_drain, args=(ssh.stdout, lines))
    reader.start()
    try:
        until(lambda: any("VNC password" in line for line in lines) or ssh.poll() is not None, 60, "the session")
        assert ssh.poll() is None, "".join(lines)
        pids = marked_pids(mark)
        ports = {s.port for s in listening(pids)}
        assert len(pids) >= 4 and len(ports) == 1, "".join(lines)
        ssh.kill()  # the connection drops as a dead laptop or network would drop it
        ssh.wait(120)
        wait_gone(mark)
        assert not [s for s in listening() if s.port in ports]
    finally:
        if ssh.poll() is None:
            ssh.kill()
            ssh.wait(120)
        reader.join(10)
        for stream in (ssh.stdin, ssh.stdout):
            if stream is not None:
                stream.close()
