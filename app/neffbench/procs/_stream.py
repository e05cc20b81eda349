"""Reading a child's output: line by line to its end (with a deadline), one reply line at a time, or all of it."""

from __future__ import annotations

import os
import selectors
import time
from collections import deque
from collections.abc import Callable

from neffbench.procs._child import Child
from neffbench.procs._lines import LineSplitter

POLL_S = 0.2
# After the child has exited, how long a process outside its group may keep its output open.
EOF_WAIT_S = 5.0
_CHUNK = 1 << 16


def pump(
    child: Child,
    on_line: Callable[[str], None],
    *,
    deadline: float | None = None,
    on_deadline: Callable[[], None] | None = None,
    on_read: Callable[[str], None] | None = None,
    poll_s: float = POLL_S,
    eof_wait_s: float = EOF_WAIT_S,
) -> bool:
    """Hand each line of the child's stdout to ``on_line`` until the stream ends; the child is not reaped.

    ``deadline`` (a ``time.monotonic()``): ``on_deadline`` is called once when it passes (the caller
    decides how the child stops). ``on_read(pending)`` follows every read, with the start of a line not
    ended yet. Once the child itself has exited, whatever it left in its group is killed; if a process
    outside the group still holds the pipe ``eof_wait_s`` later, reading stops and False is returned.
    """
    stdout = child.stdout
    assert stdout is not None, "spawned without a stdout pipe"
    fd = stdout.fileno()
    splitter = LineSplitter()
    deadline_passed = False
    exited_at: float | None = None
    ended = True
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if sel.select(poll_s):
                data = os.read(fd, _CHUNK)
                if not data:
                    break
                for line in splitter.feed(data):
                    on_line(line)
                if on_read is not None:
                    on_read(splitter.pending)
            now = time.monotonic()
            if deadline is not None and now > deadline and not deadline_passed:
                deadline_passed = True
                if on_deadline is not None:
                    on_deadline()
            if exited_at is None and child.exited():
                exited_at = now
                child.kill()  # its compiler, its helpers: nothing of the child outlives it
            elif exited_at is not None and now - exited_at > eof_wait_s:
                ended = False
                break
    for line in splitter.flush():
        on_line(line)
    return ended


class LineReader:
    """Reply lines of a child that answers requests (one line each), read with a timeout per line."""

    def __init__(self, child: Child):
        stdout = child.stdout
        assert stdout is not None, "spawned without a stdout pipe"
        self._fd = stdout.fileno()
        self._splitter = LineSplitter()
        self._lines: deque[str] = deque()
        self._eof = False

    def read_line(self, timeout: float) -> str | None:
        """The next whole line; None when none came within ``timeout``; EOFError once the output has ended."""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self._fd, selectors.EVENT_READ)
            while not self._lines:
                if self._eof:
                    raise EOFError("the child's output has ended")
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                if not sel.select(min(left, POLL_S)):
                    continue
                data = os.read(self._fd, _CHUNK)
                if data:
                    self._lines.extend(self._splitter.feed(data))
                else:
                    self._eof = True
                    self._lines.extend(self._splitter.flush())
        return self._lines.popleft()


def collect(child: Child, timeout: float) -> tuple[bytes, bytes] | None:
    """All of the child's stdout and stderr (b"" for one not piped) up to their end; None after ``timeout``."""
    streams = {s.fileno(): bytearray() for s in (child.stdout, child.stderr) if s is not None}
    chunks = dict(streams)
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        for fd in streams:
            sel.register(fd, selectors.EVENT_READ)
        while chunks:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for key, _ in sel.select(min(left, POLL_S)):
                data = os.read(key.fd, _CHUNK)
                if data:
                    chunks[key.fd] += data
                else:
                    sel.unregister(key.fd)
                    del chunks[key.fd]
    out = child.stdout.fileno() if child.stdout is not None else None
    err = child.stderr.fileno() if child.stderr is not None else None
    return (bytes(streams[out]) if out is not None else b"", bytes(streams[err]) if err is not None else b"")
