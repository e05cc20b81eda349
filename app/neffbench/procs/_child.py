"""One child process: started as the leader of a new process group and tied to us by a lifeline; signalled,
stopped (TERM, then KILL after a grace period) and reaped here only.

Until the child is reaped its pid, and so its group id, cannot be given to another process: every signal
goes to the group under a lock that reaping takes too, so none can reach a stranger. The KILL timer of
:meth:`Child.terminate` is the child's own and is cancelled when it is reaped.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Literal

from neffbench.procs._lifeline import Lifeline
from neffbench.procs._pids import group_alive
from neffbench.procs._warm import ForkedProcess, spawn_forked

log = logging.getLogger(__name__)

# After the leader has exited and its group was sent SIGKILL, how long reaping waits for the rest of the
# group to be gone: SIGKILL ends a process at once, only one stuck in the kernel could keep us waiting.
GROUP_GONE_S = 5.0
_POLL_S = 0.01

Stdin = Literal["pipe", "null"]
Stderr = Literal["stdout", "pipe", "null"]


class _Spawned:
    """A child of this process, whose exit is seen without reaping it (``waitid`` with ``WNOWAIT``)."""

    def __init__(self, popen: subprocess.Popen[bytes]):
        self._popen = popen
        self.pid = popen.pid
        self.stdin, self.stdout, self.stderr = popen.stdin, popen.stdout, popen.stderr

    def exited(self) -> bool:
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def wait_exit(self, timeout: float | None = None) -> bool:
        if timeout is None:
            try:
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                pass
            return True
        deadline = time.monotonic() + timeout
        pause = threading.Event()
        while not self.exited():
            if time.monotonic() > deadline:
                return False
            pause.wait(_POLL_S)
        return True

    def reap(self) -> int:
        return self._popen.wait()


class Child:
    """A child that leads its own process group. Made by :func:`spawn`.

    ``signal``, ``terminate``, ``kill`` and ``exited`` may be called from any thread at any time; the
    pipes belong to one reading thread; ``reap`` ends the child's story (once).
    """

    def __init__(self, process: _Spawned | ForkedProcess, lifeline: Lifeline | None):
        self._process = process
        self._lifeline = lifeline
        self.pid = process.pid
        self.started_at = time.monotonic()
        self.returncode: int | None = None
        self._lock = threading.Lock()
        self._reaped = False
        self._kill_timer: threading.Timer | None = None

    @property
    def stdout(self) -> IO[bytes] | None:
        return self._process.stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        return self._process.stderr

    @property
    def reaped(self) -> bool:
        return self._reaped

    # ---- stdin ----

    def write(self, data: bytes) -> None:
        """Write to the child's stdin (OSError, such as BrokenPipeError, when it has gone)."""
        stdin = self._process.stdin
        if stdin is None or stdin.closed:
            raise BrokenPipeError("the child's stdin is closed")
        stdin.write(data)
        stdin.flush()

    def close_stdin(self) -> None:
        """Tell the child there is nothing more to read."""
        _close(self._process.stdin)

    # ---- signals ----

    def signal(self, sig: int) -> bool:
        """Send ``sig`` to the child's process group; False once it has been reaped (or the group is empty)."""
        with self._lock:
            return self._signal_locked(sig)

    def _signal_locked(self, sig: int) -> bool:
        if self._reaped:
            return False
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def kill(self) -> None:
        """SIGKILL the whole group now."""
        self.signal(signal.SIGKILL)

    def terminate(self, grace_s: float) -> None:
        """SIGTERM the group now and SIGKILL it after ``grace_s``, unless it is reaped first. Never blocks."""
        with self._lock:
            if self._reaped:
                return
            self._signal_locked(signal.SIGTERM)
            if self._kill_timer is None:
                self._kill_timer = threading.Timer(grace_s, self._kill_after_grace)
                self._kill_timer.daemon = True
                self._kill_timer.start()

    def _kill_after_grace(self) -> None:
        # This child's own timer: a reaped child (whose pid may be another process's by now) is left alone.
        with self._lock:
            self._signal_locked(signal.SIGKILL)

    # ---- exit ----

    def exited(self) -> bool:
        """Whether the child has exited, without reaping it (so its group id stays ours)."""
        return self._reaped or self._process.exited()

    def wait_exit(self, timeout: float | None = None) -> bool:
        """Block until the child has exited, without reaping it; False if it still runs after ``timeout``."""
        return self._reaped or self._process.wait_exit(timeout)

    def reap(self, timeout: float | None = None) -> int | None:
        """Wait for the child to exit, SIGKILL what is left of its group, wait for that to go, then reap it.

        Returns its exit code (negative: the signal that ended it), or None when it had not exited
        within ``timeout`` (it is then left as it is). The pipes and the lifeline are closed once it is
        reaped. The wait holds no lock: ``terminate`` and ``kill`` stay instant meanwhile.
        """
        if self._reaped:
            return self.returncode
        if not self.wait_exit(timeout):
            return None
        # Helpers that closed their output (so EOF did not wait for them) go with the child too; the
        # leader, a zombie until reaped below, keeps the group id from being reused meanwhile.
        self.signal(signal.SIGKILL)
        deadline = time.monotonic() + GROUP_GONE_S
        pause = threading.Event()
        while group_alive(self.pid, leader_excepted=True):
            if time.monotonic() > deadline:
                log.warning("process group %d still has members %g s after SIGKILL", self.pid, GROUP_GONE_S)
                break
            pause.wait(_POLL_S)
        with self._lock:
            self.returncode = self._process.reap()
            self._reaped = True
            if self._kill_timer is not None:
                self._kill_timer.cancel()
        if self._lifeline is not None:
            self._lifeline.close()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            _close(stream)
        return self.returncode

    def kill_and_reap(self, timeout: float = GROUP_GONE_S) -> int | None:
        """SIGKILL the group and reap the child; None (logged) if it has not ended ``timeout`` after SIGKILL."""
        self.kill()
        code = self.reap(timeout)
        if code is None:
            log.warning("child %d did not end %g s after SIGKILL", self.pid, timeout)
        return code


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass


_STDIN = {"pipe": subprocess.PIPE, "null": subprocess.DEVNULL}
_STDERR = {"stdout": subprocess.STDOUT, "pipe": subprocess.PIPE, "null": subprocess.DEVNULL}


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: Stdin = "null",
    stderr: Stderr = "stdout",
    lifeline: bool = True,
    warm: bool = False,
) -> Child:
    """Start ``argv`` as the leader of a new session (and so a process group), its stdout a pipe to us.

    ``env``: the child's whole environment (default ours), with Python's output unbuffered and UTF-8.
    ``lifeline``: hand it the read end of a pipe only we hold open; a child that calls :func:`watch`
    kills its group when that closes, however we die. OSError when it cannot be started.
    ``warm``: ``argv`` is ``python -m MODULE ...`` of a worker that imports torch: forked by the warm-start
    server named in ``env`` when there is one that will (:mod:`.warm_server`), else started as usual.
    """
    full = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
    line = Lifeline() if lifeline else None
    if warm:
        forked = spawn_forked(argv, full, cwd, stdin, stderr, line)
        if forked is not None:
            if line is not None:
                line.started()
            return Child(forked, line)
    extra = line.popen_kwargs(full) if line is not None else {"env": full}
    try:
        popen = subprocess.Popen(
            list(argv),
            stdin=_STDIN[stdin],
            stdout=subprocess.PIPE,
            stderr=_STDERR[stderr],
            cwd=cwd,
            start_new_session=True,
            **extra,
        )
    except BaseException:
        if line is not None:
            line.close()
        raise
    if line is not None:
        line.started()
    return Child(_Spawned(popen), line)
