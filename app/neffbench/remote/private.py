"""A session's private folder (0700) and its secrets, the VNC password and the X cookie, in 0600 files.

Secrets go to the servers by file, never on a command line (``ps`` shows every user's argv) nor in the
environment (which job records and bug-report bundles describe). The folder names the process that owns
it, so that a later session can remove what a killed one left behind.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import string
import struct
import tempfile
from pathlib import Path

from neffbench.procs import process_alive, process_start_time

PREFIX = "neffbench-remote-"
OWNER_FILE = "owner"
PASSWORD_FILE = "vnc-password"
XAUTHORITY_FILE = "xauthority"
# VNC's own authentication (DES challenge-response) uses the first 8 characters of a password only.
PASSWORD_LENGTH = 8
# Letters and digits without the ones that read alike (0/O, 1/l/I): the password is typed by hand.
_ALPHABET = "".join(c for c in string.ascii_letters + string.digits if c not in "0O1lI")
_FAMILY_WILD = 0xFFFF
_COOKIE_NAME = b"MIT-MAGIC-COOKIE-1"


def runtime_root(env: dict[str, str] | None = None) -> Path:
    """Where session folders go: $XDG_RUNTIME_DIR (a per-user tmpfs) when it is ours, else the temp folder."""
    text = (os.environ if env is None else env).get("XDG_RUNTIME_DIR", "")
    if text:
        try:
            info = os.stat(text)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            return Path(text)
    return Path(tempfile.gettempdir())


def make_session_dir(root: Path | None = None) -> Path:
    """A new folder only we can enter (mkdtemp makes it 0700), marked with the process that owns it."""
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root or runtime_root()))
    pid = os.getpid()
    write_secret(folder / OWNER_FILE, f"{pid} {process_start_time(pid) or ''}\n".encode())
    return folder


def sweep_stale(root: Path | None = None) -> list[Path]:
    """Remove the session folders of ours whose owner has died (a SIGKILL leaves them); returns them."""
    removed = []
    for folder in (root or runtime_root()).glob(PREFIX + "*"):
        try:
            if folder.is_symlink() or folder.stat().st_uid != os.getuid():
                continue
            pid, _, started = (folder / OWNER_FILE).read_text(encoding="utf-8").strip().partition(" ")
        except (OSError, ValueError):
            continue
        if pid.isdigit() and not process_alive(int(pid), started or None):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def new_password() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(PASSWORD_LENGTH))


def write_secret(path: Path, data: bytes) -> Path:
    """Create ``path`` with mode 0600 (never through a symlink, never over an existing file) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return path


def write_password(folder: Path, password: str) -> Path:
    """The file x11vnc's ``-passwdfile`` reads (its first line)."""
    return write_secret(folder / PASSWORD_FILE, (password + "\n").encode("ascii"))


def _field(data: bytes) -> bytes:
    return struct.pack(">H", len(data)) + data


def xauthority_entry(cookie: bytes) -> bytes:
    """One Xauthority record that matches every display (family and number wildcards): the display number is
    chosen by Xvfb when it starts, after the file must already exist."""
    return struct.pack(">H", _FAMILY_WILD) + _field(b"") + _field(b"") + _field(_COOKIE_NAME) + _field(cookie)


def write_xauthority(path: Path, cookie: bytes | None = None) -> Path:
    """An Xauthority file for Xvfb's ``-auth`` and its clients' XAUTHORITY: without the cookie nobody, not even
    another user of this box, can read the screen or type into the window."""
    return write_secret(path, xauthority_entry(cookie or secrets.token_bytes(16)))
