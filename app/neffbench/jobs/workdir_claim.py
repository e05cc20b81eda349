"""Which window has a workdir first. A second window on the same workdir says so and leaves the first window's
settings be; both see every job (each job has a folder of its own, so neither steps on the other's).

The claim is an advisory lock (``flock``) on a file named after the workdir in a folder of the caller's (beside the
window's settings), never in the workdir itself: the lock goes with its holder, however the holder ends.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: every window counts as the first
    fcntl = None  # type: ignore[assignment]


class WorkdirClaim:
    """``take()`` once; ``first`` tells whether this claim holds the workdir, ``holder`` the pid of the one that
    does when it does not."""

    def __init__(self, workdir: Path, folder: Path):
        key = hashlib.sha1(str(workdir.absolute()).encode()).hexdigest()[:16]
        self.path = folder / f"{key}.lock"
        self.first = True
        self.holder: int | None = None
        self._fd: int | None = None

    def take(self) -> bool:
        if fcntl is None:
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return True  # nowhere to keep the claim: say nothing rather than something unsure
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            self.first, self.holder = False, int(text) if text.isdigit() else None
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file ends the lock
            self._fd = None
