"""Children that die with their parent: a pipe whose write end only the parent holds.

The parent keeps the write end open for as long as it lives; the child watches the read end and,
when it reads end-of-file (the parent is gone, however it died: SIGKILL, a crash, a closed
terminal), kills its own process group, which takes the compiler or the runtime and everything they
started with it. No cleanup code of the parent has to run. On Linux the child also asks for
``PR_SET_PDEATHSIG``, with a signal whose handler kills the group too: the kernel's own notice, which
does not depend on a thread of ours being scheduled. (Its default, a signal that kills only the child,
would orphan the compiler: the group must go, not just its leader.)
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

ENV = "NEFFBENCH_LIFELINE_FD"
_PR_SET_PDEATHSIG = 1
_DEATH_SIGNAL = signal.SIGUSR2


class Lifeline:
    """The parent's end. ``popen_kwargs`` go to ``subprocess.Popen``; ``close`` once the child is reaped."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()  # both close-on-exec: no other child inherits them

    @property
    def read_fd(self) -> int:
        """The child's end, for a child started other than by Popen (a warm-start server's fork)."""
        return self._read

    def popen_kwargs(self, env: dict[str, str]) -> dict[str, Any]:
        return {"pass_fds": (self._read,), "env": {**env, ENV: str(self._read)}}

    def started(self) -> None:
        """After Popen: the child has its copy of the read end; ours would only keep the pipe alive."""
        if self._read >= 0:
            os.close(self._read)
            self._read = -1

    def close(self) -> None:
        self.started()
        if self._write >= 0:
            os.close(self._write)
            self._write = -1


def _die() -> None:
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(137)


def _on_death_signal(signum: int, frame: FrameType | None) -> None:
    _die()


def watch(*, pdeathsig: bool = True) -> bool:
    """In the child: kill our process group when the parent's end closes. False without a lifeline.

    ``pdeathsig`` fires when the *thread* that started us ends, not only the process: leave it off
    for children a short-lived thread may start (the window's probes come from a thread pool).
    """
    text = os.environ.pop(ENV, "")
    if not text.isdigit():
        return False
    fd = int(text)
    try:
        os.set_inheritable(fd, False)  # the compiler must not hold the pipe open after we are gone
    except OSError:
        return False
    if pdeathsig and sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread():
        signal.signal(_DEATH_SIGNAL, _on_death_signal)
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(_DEATH_SIGNAL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
        if os.getppid() == 1:  # the parent died before we got here
            _die()

    def wait() -> None:
        while True:
            try:
                if not os.read(fd, 1):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        _die()

    threading.Thread(target=wait, name="neffbench-lifeline", daemon=True).start()
    return True
