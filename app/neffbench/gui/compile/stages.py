"""The Compile tab's tree of jobs, their stages and the compiler's passes, as they start and finish.

Nothing in it stays "running" once its job has ended: what was running when a job failed, was
cancelled or lost its worker says so, with how long it had run. A running stage or pass shows its
own elapsed time, ticking.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QSize
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.readable import elide_with_tooltips

RUNNING = "running"
# What a job's outcome makes of the stages and passes still running in it.
ENDED_AS = {"failed": "failed", "cancelled": "cancelled", "interrupted": "interrupted", "succeeded": "done"}


def seconds_text(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 600 else f"{int(seconds // 60)} min {int(seconds % 60)} s"


class StageTree(QTreeWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("stages")
        self.setHeaderLabels(["Stage / compiler pass", "State", "Time"])
        header = self.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(60)
        self.setRootIsDecorated(True)
        elide_with_tooltips(self)  # a sweep point's long row, a pass's long name
        self.setToolTip(
            "Stages of each job as the worker reports them, and the compiler's passes as they "
            "start and finish. No percentage: a compile's length is not known in advance."
        )
        self.job: QTreeWidgetItem | None = None
        self._stage: QTreeWidgetItem | None = None
        self._stage_t: float | None = None
        self._passes: dict[str, QTreeWidgetItem] = {}
        self._running: dict[int, tuple[QTreeWidgetItem, float]] = {}  # id -> (item, monotonic start)

    # Names longer than this are elided rather than widening the Compile tab past a laptop screen.
    MAX_MIN_WIDTH = 360

    def minimumSizeHint(self) -> QSize:
        """Wide enough for the names, states and times shown, so a narrow window never elides them."""
        hint = super().minimumSizeHint()
        header = self.header()
        columns = sum(max(self.sizeHintForColumn(i), header.sectionSizeHint(i)) for i in range(3))
        width = columns + 2 * self.frameWidth() + self.verticalScrollBar().sizeHint().width()
        return QSize(max(hint.width(), min(width, self.MAX_MIN_WIDTH)), hint.height())

    def restart(self) -> None:
        """Empty for a new compile (not ``reset``: QAbstractItemView's, which ``clear`` calls)."""
        self.clear()
        self.job, self._stage, self._passes, self._running = None, None, {}, {}

    def _run(self, item: QTreeWidgetItem) -> None:
        item.setText(1, RUNNING)
        self._running[id(item)] = (item, time.monotonic())
        self.updateGeometry()  # a new row may need a wider minimum

    def _stop(self, item: QTreeWidgetItem, state: str, seconds: float | None = None) -> None:
        started = self._running.pop(id(item), (None, None))[1]
        item.setText(1, state)
        if seconds is None and started is not None:
            seconds = time.monotonic() - started
        if seconds is not None:
            item.setText(2, seconds_text(seconds))

    def start_job(self, text: str, job_dir: str) -> None:
        self.job = QTreeWidgetItem([text, "", ""])
        self.job.setToolTip(0, job_dir)
        self.addTopLevelItem(self.job)
        self.job.setExpanded(True)
        self._run(self.job)
        self._passes = {}

    def set_job_state(self, text: str) -> None:
        if self.job is not None:
            self.job.setText(1, text)

    def enter_stage(self, stage: str, t: float | None) -> None:
        self.close_stage(t)
        if self.job is None or stage == "done":
            return
        self._stage = QTreeWidgetItem([stage, "", ""])
        self._stage_t = t
        self.job.addChild(self._stage)
        self._run(self._stage)
        self.job.setText(1, stage)
        self.scrollToItem(self._stage)

    def close_stage(self, t: float | None) -> None:
        if self._stage is None:
            return
        took = t - self._stage_t if isinstance(t, (int, float)) and isinstance(self._stage_t, (int, float)) else None
        self._stop(self._stage, "done", took)
        self._stage = None

    def show_pass(self, event: dict) -> None:
        parent = self._stage or self.job
        if parent is None:
            return
        key = event.get("path") or event.get("name", "?")
        item = self._passes.get(key)
        if item is None:
            item = QTreeWidgetItem([event.get("name", "?"), "", ""])
            parent.addChild(item)
            parent.setExpanded(True)
            self._passes[key] = item
        if event.get("state") == "finished":
            duration = event.get("duration_s")
            self._stop(item, "finished", duration if isinstance(duration, (int, float)) else None)
        else:
            self._run(item)
            self.scrollToItem(item)

    def finish_job(self, outcome: str, label: str, duration_s: float | None) -> None:
        """The job ended: it and everything still running in it take the outcome."""
        ended = ENDED_AS.get(outcome, outcome)
        colour = QColor(theme.JOB_OUTCOME_COLOURS.get(outcome, theme.ORIGINAL))
        for item, _ in list(self._running.values()):
            if item is self.job:
                continue
            self._stop(item, ended)
            if ended != "done":
                item.setForeground(1, colour)
        self._stage = None
        if self.job is not None:
            self._stop(self.job, label, duration_s)
            self.job.setForeground(1, colour)

    def add_point(self, text: str, state: str, tip: str = "") -> QTreeWidgetItem:
        """A top-level row of its own (a sweep's point), its state and time set by ``set_point``."""
        item = QTreeWidgetItem([text, state, ""])
        item.setToolTip(0, tip or text)
        self.addTopLevelItem(item)
        self.updateGeometry()
        return item

    def set_point(self, item: QTreeWidgetItem, state: str, seconds: float | None = None) -> None:
        """``running`` starts its clock; any other state stops it, in the outcome's colour."""
        if state == RUNNING:
            self._run(item)
            self.scrollToItem(item)
            return
        if id(item) in self._running or seconds is not None:
            self._stop(item, state, seconds)
        else:
            item.setText(1, state)
        if state in theme.JOB_OUTCOME_COLOURS:
            item.setForeground(1, QColor(theme.JOB_OUTCOME_COLOURS[state]))

    def tick(self) -> None:
        """Running items show how long they have run so far."""
        now = time.monotonic()
        for item, started in self._running.values():
            item.setText(2, seconds_text(now - started))

    def states(self) -> list[tuple[str, str]]:
        """(name, state) of every item, depth first (for tests and screenshots)."""
        out = []

        def walk(item: QTreeWidgetItem | None) -> None:
            assert item is not None  # asked by an index below the count
            out.append((item.text(0), item.text(1)))
            for i in range(item.childCount()):
                walk(item.child(i))

        for i in range(self.topLevelItemCount()):
            walk(self.topLevelItem(i))
        return out
