"""For the remote-display tests: processes told apart by a mark in their environment, a throwaway sshd, a
real VNC client in a child process, and whether a screenshot shows the preview's plots."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.processes import until

REPO = Path(__file__).resolve().parents[1]
MARK_ENV = "NEFFBENCH_TEST_MARK"


def new_mark() -> str:
    return uuid.uuid4().hex


def marked_pids(mark: str) -> list[int]:
    """Every live process whose environment carries ``MARK_ENV=mark`` (all descendants of the one we started)."""
    needle = f"{MARK_ENV}={mark}".encode()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(int(entry.name))
    return out


def command_of(pid: int) -> list[str]:
    try:
        return [
            p.decode(errors="replace") for p in (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0") if p
        ]
    except OSError:
        return []


def every_command_line() -> list[bytes]:
    """The argv of every process on the box, as ``ps`` shows them to any user."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out.append((entry / "cmdline").read_bytes())
            except OSError:
                pass
    return out


def require(*tools: str) -> None:
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (make test installs them as root with apt)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def saturated_share(png: Path) -> float:
    """The share of strongly coloured pixels: the preview's heat maps and curves; the form is grey."""
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    if image.isNull():
        return 0.0
    points = [(x, y) for x in range(0, image.width(), 4) for y in range(0, image.height(), 4)]
    hits = sum(1 for x, y in points if (c := image.pixelColor(x, y)).saturation() > 150 and c.value() > 80)
    return hits / max(1, len(points))


PREVIEW_SHARE = 0.005


def vnc(
    port: int, password: str | None, out: Path | None = None, key: str | None = None
) -> subprocess.CompletedProcess:
    """Run vncdotool in a child (its Twisted reactor runs once per process); the password goes on stdin."""
    argv = [sys.executable, "-m", "tests.vnc_client", str(port), str(out or "")]
    if key:
        argv.append(key)
    return subprocess.run(
        argv, input=(password or "") + "\n", capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )


def window_env(tmp_path: Path, mark: str) -> dict[str, str]:
    """Settings, workdir and session folders of the test's own; the mark on every process it starts."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY")}
    env.update(
        {
            MARK_ENV: mark,
            "XDG_RUNTIME_DIR": str(runtime),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
        }
    )
    return env


@dataclass
class Sshd:
    """A throwaway sshd on 127.0.0.1: its own host key, config and authorized_keys, run as the current user."""

    folder: Path
    port: int
    popen: subprocess.Popen | None = None
    xauthority: Path = field(init=False)

    def __post_init__(self) -> None:
        self.xauthority = self.folder / "forwarded.xauth"

    def start(self) -> None:
        f = self.folder
        for name in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(f / name)], check=True)
        (f / "authorized_keys").write_text((f / "client_key.pub").read_text())
        (f / "authorized_keys").chmod(0o600)
        host_pub = " ".join((f / "host_key.pub").read_text().split()[:2])
        (f / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host_pub}\n")
        # The forwarded display's cookie goes to a file of the test's (SetEnv), not to ~/.Xauthority.
        config = f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {f / "host_key"}
AuthorizedKeysFile {f / "authorized_keys"}
PidFile {f / "sshd.pid"}
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitUserRC no
PermitRootLogin prohibit-password
X11Forwarding yes
X11UseLocalhost yes
XAuthLocation {shutil.which("xauth")}
SetEnv XAUTHORITY={self.xauthority}
"""
        (f / "sshd_config").write_text(config)
        if os.geteuid() == 0:
            # Privilege separation as root needs the directory its service unit would make.
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        sshd = shutil.which("sshd") or "/usr/sbin/sshd"
        with open(f / "sshd.log", "wb") as log:
            self.popen = subprocess.Popen(
                [sshd, "-D", "-e", "-f", str(f / "sshd_config")], stdout=subprocess.DEVNULL, stderr=log
            )
        until(lambda: self._listening() or self.popen.poll() is not None, 60, "sshd to listen")
        assert self.popen.poll() is None, (f / "sshd.log").read_text()

    def _listening(self) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def ssh_argv(self, *options: str) -> list[str]:
        f = self.folder
        return [
            "ssh", "-F", "/dev/null", "-p", str(self.port), "-i", str(f / "client_key"),
            "-o", f"UserKnownHostsFile={f / 'known_hosts'}", "-o", "StrictHostKeyChecking=yes",
            "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", *options, f"{os.environ.get('USER') or _user()}@127.0.0.1",
        ]  # fmt: skip

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(120)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def _user() -> str:
    import getpass

    return getpass.getuser()


def wait_gone(mark: str, timeout: float = 60.0) -> None:
    def gone() -> bool:
        return not marked_pids(mark)

    until(
        gone, timeout, f"every process of the session to end (left: {[command_of(p)[:2] for p in marked_pids(mark)]})"
    )


def poll_until(predicate, timeout: float, what: str, pause: float = 0.5) -> None:
    """Like :func:`until`, for checks that cost a child process each."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(pause)
