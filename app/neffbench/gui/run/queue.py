"""Run the missing buckets: the jobs of a compile's buckets that have no run yet, one after another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from neffbench.runs.missing_buckets import ended_text


class BucketQueue(QObject):
    """Asks for one run at a time (``run_requested``, as the Run button does) and the next when it succeeded;
    a failed or cancelled run stops the rest, which ``stopped_text`` names."""

    run_requested = Signal(str, dict)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.pending: list[str] = []
        self.options: dict[str, Any] = {}
        self.total = 0
        self.running: str | None = None

    @property
    def active(self) -> bool:
        return self.running is not None

    def start(self, job_dirs: list[str], options: dict[str, Any]) -> None:
        self.pending, self.options, self.total = list(job_dirs), dict(options), len(job_dirs)
        self._next()

    def position_text(self) -> str:
        """``bucket 2 of 3`` while the queue runs."""
        done = self.total - len(self.pending)
        return f"bucket {done} of {self.total} ({Path(self.running or '').name})" if self.active else ""

    def finished(self, outcome: str) -> str | None:
        """After each run of the queue: the next is asked for when this one succeeded; the sentence to show
        when the queue has ended (None while it goes on, or when it was not running)."""
        if not self.active:
            return None
        if outcome == "succeeded" and self.pending:
            self._next()
            return None
        left = len(self.pending)
        self.pending, self.running = [], None
        return ended_text(self.total, left, outcome)

    def _next(self) -> None:
        self.running = self.pending.pop(0)
        self.run_requested.emit(self.running, self.options)
