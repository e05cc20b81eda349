"""A sweep in the Compile tab: one row per point with its state and time, each point's log lines, a headline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTreeWidgetItem

from neffbench.gui.widgets import theme
from neffbench.jobs.summary import human_bytes
from neffbench.views.sweep import point_number

ENDED = ("succeeded", "failed", "cancelled", "interrupted")


def counts_text(counts: dict[str, int]) -> str:
    """``5 succeeded, 1 failed, 1 invalid`` in a fixed order, leaving out what is zero."""
    order = ("succeeded", "failed", "cancelled", "interrupted", "invalid", "pending", "running")
    return ", ".join(f"{counts[k]} {k}" for k in order if counts.get(k)) or "no points"


class SweepProgress:
    """Drives a CompilePanel's widgets for one sweep; the panel's own job methods are not used meanwhile."""

    def __init__(self, panel: Any, plan: Any):
        self.panel = panel
        self.plan = plan
        self.labels = plan.words
        self.items: dict[int, QTreeWidgetItem] = {}
        self.states: dict[int, str] = {}
        self.sweep_id: str | None = None
        self.neffs: dict[int, str] = {}  # from each job's own "finished" event
        self.rows: dict[int, QTreeWidgetItem] = {}
        panel.begin_run()
        for point in plan.points:
            state = "pending" if point.valid else "invalid"
            tip = "; ".join(p.message for p in point.errors) if not point.valid else ""
            self.items[point.index] = panel.stages.add_point(
                f"#{point_number(point.index)} {self.labels[point.index]}", state, tip
            )
            self.states[point.index] = state
            if not point.valid:
                self.items[point.index].setForeground(1, QColor(theme.BAD))
        panel.state_label.setText(
            f"Sweeping {plan.base.name}: {plan.count} points ({len(plan.valid)} to compile, "
            f"{len(plan.invalid)} invalid)."
        )

    def event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "sweep_started":
            self.sweep_id = Path(ev.get("path") or "").parent.name or None
        elif kind == "sweep_point":
            self._point(ev)
        elif kind == "sweep_node" and ev.get("differs"):
            self.panel.log_view.append_lines(
                [
                    f"neffbench: node {ev.get('node')} differs from this machine: "
                    + "; ".join(f"{k} {v}" for k, v in ev["differs"].items())
                ]
            )
        elif kind == "compiler_error" and ev.get("code"):
            self.panel.log_view.add_error_code(ev["code"], ev.get("message", ""))
        elif kind == "finished" and ev.get("point") in self.items:
            neffs = ev.get("neffs") or []
            self.neffs[ev["point"]] = (
                ", ".join(f"{Path(n['path']).name} ({human_bytes(n.get('size'))})" for n in neffs)
                if neffs
                else ev.get("neff_note") or "no NEFF"
            )
            if ev["point"] in self.rows:
                self.rows[ev["point"]].setText(2, self.neffs[ev["point"]])

    def _point(self, ev: dict[str, Any]) -> None:
        index, state = ev.get("point"), ev.get("state") or "?"
        if index not in self.items:
            return
        item = self.items[index]
        self.states[index] = state
        shown = f"{state} (cached)" if ev.get("cached") and state == "succeeded" else state
        if ev.get("node"):
            item.setToolTip(1, f"on {ev['node']}")
        self.panel.stages.set_point(
            item, "running" if state == "running" else shown, ev.get("duration_s") if state in ENDED else None
        )
        if state == "waiting":
            item.setToolTip(1, ev.get("reason") or "waiting for memory")
        if state in ENDED:
            self._result_row(index, shown, ev)
        running = [self.labels[i] for i, s in self.states.items() if s == "running"]
        done = sum(1 for s in self.states.values() if s in ENDED)
        if running and not self.panel.cancelling:
            self.panel.state_label.setText(
                f"Sweeping {self.plan.base.name}: {done} of {len(self.plan.valid)} "
                f"done; running {', '.join(running[:3])}" + ("…" if len(running) > 3 else "")
            )

    def _result_row(self, index: int, shown: str, ev: dict[str, Any]) -> None:
        job = ev.get("job_id") or ""
        item = QTreeWidgetItem([self.labels[index], shown, self.neffs.get(index, ""), ev.get("reason") or "", job])
        self.rows[index] = item
        item.setForeground(1, QColor(theme.JOB_OUTCOME_COLOURS.get(ev.get("state") or "", theme.ORIGINAL)))
        if job:
            item.setData(0, Qt.ItemDataRole.UserRole, str(Path(self.panel.workdir or ".") / job))
        if ev.get("reason"):
            for col in range(5):
                item.setToolTip(col, ev["reason"])
        self.panel.results.addTopLevelItem(item)
        for col in (0, 1, 2):
            self.panel.results.resizeColumnToContents(col)

    def first_failed_job(self) -> str | None:
        """The job directory of the first point (in the plan's order) that failed, if any did."""
        for index in sorted(self.rows):
            if self.states.get(index) in ("failed", "interrupted"):
                path = self.rows[index].data(0, Qt.ItemDataRole.UserRole)
                if path:
                    return str(path)
        return None

    def finished(self, result: Any, error: str | None) -> str:
        """The headline, also for the status bar."""
        counts: dict[str, int] = {}
        for state in self.states.values():
            counts[state] = counts.get(state, 0) + 1
        if error:
            text, shade = f"Sweep not started: {error}", "failed"
        else:
            state = result.state if result is not None else "failed"
            ran_badly = any(counts.get(k) for k in ("failed", "interrupted"))
            what = (
                "Sweep cancelled" if state == "cancelled" else "Sweep done with failures" if ran_badly else "Sweep done"
            )
            # Invalid points are recorded, never run: the sweep did what it could, in the warning colour.
            shade = (
                "cancelled"
                if state == "cancelled" or (counts.get("invalid") and not ran_badly)
                else ("failed" if ran_badly else "succeeded")
            )
            invalid = " (not run)" if counts.get("invalid") else ""
            text = (
                f"{what}: {counts_text(counts)}{invalid}. "
                f"Sweep {result.sweep_id if result else '?'} is in the Sweeps tab."
            )
        self.panel.end_run(text, shade)
        return text
