"""One blocking loop at a time on a Python thread of its own, its log lines batched to the GUI thread on a
timer: what the compile, run and sweep controllers share. A Python thread, not a QThread: what the loop
runs may touch torch, which must never run on a thread Python did not create (see background.py)."""

from __future__ import annotations

import threading
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, Signal

# How often queued log lines are handed to the GUI: often enough to look live, rarely enough to batch.
LINE_FLUSH_MS = 50


class LineBuffer:
    """Collects lines on the loop's thread; the GUI thread takes them in one batch."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._lock = threading.Lock()

    def append(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)

    def take(self) -> list[str]:
        with self._lock:
            lines, self._lines = self._lines, []
        return lines


class Loop(Protocol):
    """What a controller starts: a QObject of the GUI thread whose ``run`` blocks on the loop's thread."""

    def run(self) -> None: ...

    def deleteLater(self) -> None: ...  # noqa: N802 - Qt's name


class ThreadedController(QObject):
    """Starts a loop object (a ``run`` method that blocks) on a new thread. The loop stays a QObject of the
    GUI thread, so what its signals are connected to runs there.

    Subclasses connect the loop's own signals before ``_launch`` and are told in ``_ended`` once the
    thread has finished, after the last lines were handed over.
    """

    lines_received = Signal(list)
    _thread_finished = Signal()  # emitted by the loop's thread as its last act, delivered on the GUI thread

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._buffer = LineBuffer()
        self._thread: threading.Thread | None = None
        self._loop: Loop | None = None
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(LINE_FLUSH_MS)
        self._flush_timer.timeout.connect(self._on_flush_timer_timeout)
        self._thread_finished.connect(self._on_thread_finished)

    @property
    def is_running(self) -> bool:
        return self._thread is not None

    def _launch(self, loop: Loop, name: str, announce=None) -> None:
        """Start ``loop``; ``announce`` (emitting ``started``) runs once ``is_running`` is true, before the thread."""

        def body() -> None:
            try:
                loop.run()
            finally:
                self._thread_finished.emit()

        thread = threading.Thread(target=body, name=name)  # not a daemon: a job record is never cut off mid-write
        self._thread, self._loop = thread, loop
        self._flush_timer.start()
        if announce is not None:
            announce()
        thread.start()

    def _on_flush_timer_timeout(self) -> None:
        lines = self._buffer.take()
        if lines:
            self.lines_received.emit(lines)

    def _on_thread_finished(self) -> None:
        self._flush_timer.stop()
        self._on_flush_timer_timeout()  # the loop's last lines before its result
        thread, loop = self._thread, self._loop
        self._thread = self._loop = None
        assert thread is not None and loop is not None  # the loop whose thread has finished
        thread.join()  # it has emitted its last signal: this returns at once
        loop.deleteLater()
        self._ended(loop)

    def _ended(self, loop: Loop) -> None:
        """The loop's thread has finished (override)."""
