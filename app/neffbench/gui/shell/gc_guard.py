"""Python's garbage collection on the GUI thread only."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer


class MainThreadGC(QObject):
    """Turns the automatic collector off and collects from a timer on the GUI thread instead.

    Any allocation can start a collection, on whatever thread makes it: the preview's worker makes
    millions while it imports torch. A collection there deletes the Qt objects of unreachable cycles
    (a closed window's widgets, plots and timers) from a thread not their own, and Qt then crashes on a
    dangling timer. pyqtgraph's ``GarbageCollector`` does the same; this one can also be stopped.
    """

    def __init__(self, interval_ms: int = 1000, parent: QObject | None = None):
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._threshold = gc.get_threshold()[0]
        gc.disable()
        self._timer.start(interval_ms)

    def _on_timer_timeout(self) -> None:
        # As the automatic collector would: the young generation when it is due, and an older one only when its
        # own count is due too. (Going from the young generation straight to the whole heap made every tenth
        # collection a full one: with torch loaded, a tenth of a second or more on the GUI thread.)
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[0] <= self._threshold:
            return
        generation = 0
        while generation < 2 and counts[generation + 1] > thresholds[generation + 1]:
            generation += 1
        gc.collect(generation)

    def stop(self) -> None:
        """Back to automatic collection, after one full collection here."""
        self._timer.stop()
        gc.collect()
        gc.enable()
