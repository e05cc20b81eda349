"""``neffbench remote`` for real: Xvfb, x11vnc and the window, seen and driven with a real VNC client.

Security, checked from the outside: the VNC server's sockets are read from /proc (127.0.0.1 only), it
refuses a client without the password or with a wrong one, the secrets are in no process's argv or
environment, in no log and on the terminal once; and nothing is left running after the window quits,
after SIGKILL of ``neffbench remote``, or after Ctrl-C.
"""

from __future__ import annotations

import re
import signal
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from neffbench.remote.sockets import listening
from tests.processes import until
from tests.remote_helpers import (
    PREVIEW_SHARE,
    command_of,
    every_command_line,
    marked_pids,
    new_mark,
    poll_until,
    require,
    saturated_share,
    vnc,
    wait_gone,
    window_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.remote]


@dataclass
class Remote:
    """A ``neffbench remote`` we started, its output gathered as it comes."""

    popen: subprocess.Popen
    mark: str
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.out + self.err)

    def field(self, pattern: str) -> str:
        match = re.search(pattern, self.text())
        assert match, f"{pattern!r} not in the output:\n{self.text()}"
        return match[1]

    @property
    def port(self) -> int:
        return int(self.field(r"-L \d+:127\.0\.0\.1:(\d+) "))

    @property
    def password(self) -> str:
        return self.field(r"VNC password for this session: (\S+)")

    @property
    def folder(self) -> Path:
        return Path(self.field(r"also in (\S+)/vnc-password"))

    @property
    def display(self) -> str:
        return self.field(r"private display \((:\d+)\)")

    def pid_of(self, program: str) -> int:
        pids = [p for p in marked_pids(self.mark) if command_of(p)[:1] and command_of(p)[0].endswith(program)]
        assert pids, f"no {program} among {[command_of(p)[:3] for p in marked_pids(self.mark)]}"
        return pids[0]


def _start(tmp_path: Path) -> Remote:
    require("Xvfb", "x11vnc")
    pytest.importorskip("vncdotool", reason="vncdotool (the test extra) is not installed")
    mark = new_mark()
    popen = subprocess.Popen(
        [sys.executable, "-m", "neffbench", "remote", "--size", "1280x800"],
        cwd=tmp_path,
        env=window_env(tmp_path, mark),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    remote = Remote(popen, mark)
    for stream, lines in ((popen.stdout, remote.out), (popen.stderr, remote.err)):
        reader = threading.Thread(target=lambda s=stream, out=lines: out.extend(line.rstrip("\n") for line in s))
        reader.start()
        remote.readers.append(reader)
    until(lambda: "VNC password" in remote.text() or popen.poll() is not None, 60, "neffbench remote to be ready")
    assert popen.poll() is None, remote.text()
    return remote


def _exit_code(popen: subprocess.Popen, timeout: float = 120) -> int | None:
    """Its exit code once it has ended; None if it has not after ``timeout`` (so that the assertion says what it
    printed)."""
    try:
        return popen.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


@pytest.fixture
def started():
    remotes: list[Remote] = []

    def start(tmp_path: Path) -> Remote:
        remotes.append(_start(tmp_path))
        return remotes[-1]

    yield start
    for remote in remotes:
        if remote.popen.poll() is None:  # whatever a failing test left
            remote.popen.send_signal(signal.SIGINT)
            remote.popen.wait(120)
        for reader in remote.readers:
            reader.join(20)
        for stream in (remote.popen.stdout, remote.popen.stderr):
            if stream is not None:
                stream.close()


def test_the_window_over_vnc_with_its_password_only_on_loopback_and_gone_when_it_quits(started, tmp_path):
    remote = started(tmp_path)
    port, password = remote.port, remote.password

    # Where it listens, from the kernel's socket table: 127.0.0.1, the printed port, nothing else.
    sockets = listening(marked_pids(remote.mark))
    assert sockets and all(s.address == "127.0.0.1" for s in sockets), sockets
    assert {s.port for s in sockets} == {port}
    assert {s.port for s in listening([remote.pid_of("Xvfb")])} == set()

    # The secrets: in 0600 files of a 0700 folder; in nobody's argv or environment, in no log.
    folder = remote.folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("vnc-password", "xauthority"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    cookie = (folder / "xauthority").read_bytes()[-16:]
    for argv in every_command_line():
        assert password.encode() not in argv and cookie.hex().encode() not in argv
    for pid in marked_pids(remote.mark):
        assert password.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
    assert password not in (folder / "session.log").read_text(errors="replace")

    # A real VNC client: refused without the password and with a wrong one, let in with it.
    refused = vnc(port, None)
    assert refused.returncode == 3 and "REFUSED" in refused.stdout, refused.stdout + refused.stderr
    wrong = vnc(port, "Wrong123")
    assert wrong.returncode == 3 and "REFUSED" in wrong.stdout, wrong.stdout + wrong.stderr
    shot = tmp_path / "vnc.png"

    def preview_shown() -> bool:
        seen = vnc(port, password, shot)
        assert seen.returncode == 0, seen.stdout + seen.stderr
        return saturated_share(shot) > PREVIEW_SHARE

    poll_until(preview_shown, 90, "the preview's plots in the VNC capture")
    print(f"VNC capture: {shot}")

    # Ctrl+Q typed through VNC quits the window, and the session ends with it.
    vnc(port, password, key="ctrl-q")
    assert remote.popen.wait(120) == 0, remote.text()
    wait_gone(remote.mark)
    assert not [s for s in listening() if s.port == port]
    assert not folder.exists()
    assert remote.text().count(password) == 1, remote.text()


def test_a_second_session_beside_the_first_and_sigkill_or_ctrl_c_leaves_nothing(started, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = started(tmp_path / "a")
    second = started(tmp_path / "b")
    assert first.display != second.display and first.port != second.port

    # SIGKILL: no cleanup code of neffbench remote runs; its lifeline takes the display, server and window.
    first.popen.kill()
    first.popen.wait(120)
    wait_gone(first.mark)
    assert not [s for s in listening() if s.port == first.port]
    assert marked_pids(second.mark) and [s for s in listening() if s.port == second.port]

    # Ctrl-C ends the other the ordinary way, folder and all.
    second.popen.send_signal(signal.SIGINT)
    assert _exit_code(second.popen) == 130, second.text()
    wait_gone(second.mark)
    assert not [s for s in listening() if s.port == second.port]
    assert not second.folder.exists()
    # The killed one's folder (its password file) goes at the next start.
    from neffbench.remote.private import sweep_stale

    assert sweep_stale(first.folder.parent) == [first.folder]
