"""One blocking loop at a time on a QThread of its own, its log lines batched to the GUI thread on a timer:
what the compile, run and sweep controllers share."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QThread, QTimer, Signal

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


class ThreadedController(QObject):
    """Starts a loop object (a ``run`` slot that blocks, a ``done`` signal at its end) on a new thread.

    Subclasses connect the loop's own signals before ``_launch`` and are told in ``_ended`` once the
    thread has finished, after the last lines were handed over.
    """

    lines_received = Signal(list)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._buffer = LineBuffer()
        self._thread: QThread | None = None
        self._loop: QObject | None = None
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(LINE_FLUSH_MS)
        self._flush_timer.timeout.connect(self._on_flush_timer_timeout)

    @property
    def is_running(self) -> bool:
        return self._thread is not None

    def _launch(self, loop: QObject, name: str, announce=None) -> None:
        """Start ``loop``; ``announce`` (emitting ``started``) runs once ``is_running`` is true, before the thread."""
        thread = QThread(self)
        thread.setObjectName(name)
        loop.moveToThread(thread)
        thread.started.connect(loop.run)
        loop.done.connect(thread.quit)
        thread.finished.connect(self._on_thread_finished)
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
        loop.deleteLater()
        thread.deleteLater()
        self._ended(loop)

    def _ended(self, loop: QObject) -> None:
        """The loop's thread has finished (override)."""
