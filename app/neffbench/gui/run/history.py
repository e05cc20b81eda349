"""The Run view's history: a target's run records read off the GUI thread, their table, and two runs compared."""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.readable import elide_with_tooltips
from neffbench.views.run import RunView

OUTCOME_COLOURS = {
    "succeeded": theme.GOOD,
    "failed": theme.BAD,
    "cancelled": theme.WARN,
    "interrupted": theme.WARN,
    "running": theme.ORIGINAL,
}
COLUMNS = (
    "Started",
    "Runtime",
    "Mode",
    "Iterations",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "Mean ms",
    "Items/s",
    "Numerics",
    "Outcome",
)
RECORD_ROLE = Qt.ItemDataRole.UserRole


@dataclass
class History:
    """What the worker thread read for one target: what it is, its runs (oldest first), its compile's buckets."""

    path: str
    subject: Any = None  # RunSubject
    error: str | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    curve: list[dict[str, Any]] = field(default_factory=list)
    curve_runtime: str | None = None


def load_history(path: str) -> History:
    """Runs on a worker thread: JSON reads only (the target's job.json, run records, sibling jobs' runs)."""
    from neffbench.runs.history import bucket_curve, runs
    from neffbench.runs.missing_buckets import curve_runtime
    from neffbench.runs.subject import SubjectError, resolve

    try:
        subject = resolve(path)
    except SubjectError as exc:
        return History(path, error=str(exc))
    found = runs(subject.runs_dir) if subject.runs_dir.is_dir() else []
    runtime = curve_runtime(found)
    curve = bucket_curve(subject.job_dir, runtime) if subject.job_dir is not None else []
    return History(path, subject, None, found, curve, runtime)


def load_or_error(token: int, path: str) -> tuple[int, History]:
    """On a worker thread: the history, or why it cannot be read (as the history's error)."""
    try:
        return token, load_history(path)
    except Exception as exc:  # noqa: BLE001 - shown in the panel; the worker must always answer
        return token, History(path, error=f"Cannot read the runs of {path}: {exc}")


def selection_text(records: list[dict[str, Any]]) -> str:
    """What the runs selected in the history are: two compared, one's latency, or how many."""
    from neffbench.runs.summary import latency_text

    if len(records) == 2:
        return comparison_html(*records)
    if len(records) == 1:
        run = RunView.of(records[0])
        variant = f" [{run.variant}]" if run.variant else ""
        return f"{kind_of(run)}{variant}: {latency_text(run.stats)}"
    if records:
        return f"{len(records)} runs selected: the plots show the two oldest. Select one or two runs."
    return ""


def started_text(iso: str | None) -> str:
    """A record's UTC ``started`` in local time, to the second."""
    if not iso:
        return "?"
    try:
        when = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def runtime_text(record: RunView | dict[str, Any]) -> str:
    """``CPU`` or ``NeuronCore (nrtpy)``: the label, which names the runtime; the runtime asked for when none ran."""
    return RunView.of(record).where


def verdict(numerics: dict[str, Any] | None) -> tuple[str, bool | None]:
    """``match`` / ``MISMATCH`` / ``not compared``, and whether it is good (None: not known)."""
    if not numerics or not numerics.get("checked"):
        return "not compared", None
    if numerics.get("problem") or not numerics.get("match"):
        return "MISMATCH", False
    return "match", True


def kind_of(record: RunView | dict[str, Any]) -> str:
    """``CPU`` for anything that did not run on a NeuronCore; the label otherwise."""
    run = RunView.of(record)
    return (run.label or "NeuronCore") if run.on_device else "CPU"


def _ms(stats: dict[str, Any] | None, key: str) -> str:
    value = (stats or {}).get(key)
    return f"{value:.3f}" if isinstance(value, (int, float)) else "–"


class _Number(QTableWidgetItem):
    """Sorts by the value, not the text."""

    def __init__(self, text: str, value: float | None):
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole + 1, value if value is not None else float("-inf"))
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return self.data(Qt.ItemDataRole.UserRole + 1) < other.data(Qt.ItemDataRole.UserRole + 1)


class HistoryTable(QTableWidget):
    """One row per run record, newest first (sortable by any column); ``runs_selected`` carries the selected
    records, oldest first, so that a comparison reads "B (the later run) over A"."""

    runs_selected = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("run-history")
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        header.setSortIndicator(0, Qt.SortOrder.DescendingOrder)
        elide_with_tooltips(self)
        self.setToolTip(
            "Every run of this target, newest first. Select one to see its plots; select two "
            "(Ctrl+click, or Shift+arrow keys) to overlay and compare them."
        )
        self.itemSelectionChanged.connect(self._on_self_item_selection_changed)

    def set_runs(self, runs: list[dict[str, Any]], select: str | None = None) -> None:
        """Fills the table; keeps the selection by record path, or selects ``select`` (a record path)."""
        keep = [RunView.of(r).path for r in self.selected_runs()]
        self.blockSignals(True)
        try:
            self.setSortingEnabled(False)
            self.clearContents()
            self.setRowCount(len(runs))
            for row, record in enumerate(reversed(runs)):
                self._fill_row(row, record)
            self.setSortingEnabled(True)
        finally:
            self.blockSignals(False)
        wanted = [select] if select else keep
        self.select_paths([p for p in wanted if p] or [RunView.of(r).path for r in runs[-1:]])

    def select_paths(self, paths: Sequence[str | None]) -> None:
        """Selects the rows of these record paths (the first becomes current); emits ``runs_selected`` once."""
        self.blockSignals(True)
        try:
            self.clearSelection()
            flags = self.selectionModel().SelectionFlag
            for path in paths:
                for row in range(self.rowCount()):
                    if RunView.of(self._record(row)).path == path:
                        index = self.model().index(row, 0)
                        self.selectionModel().select(index, flags.Select | flags.Rows)
                        if path == paths[0]:
                            self.selectionModel().setCurrentIndex(index, flags.NoUpdate)
                            self.scrollTo(index)
        finally:
            self.blockSignals(False)
        self._on_self_item_selection_changed()

    def selected_runs(self) -> list[dict[str, Any]]:
        rows = sorted({index.row() for index in self.selectionModel().selectedRows()})
        return [self._record(row) for row in rows]

    def record_at(self, row: int) -> dict[str, Any]:
        return self._record(row)

    def _record(self, row: int) -> dict[str, Any]:
        item = self.item(row, 0)
        return item.data(RECORD_ROLE) if item is not None else {}

    def _fill_row(self, row: int, record: dict[str, Any]) -> None:
        run = RunView.of(record)
        stats = run.stats or {}
        iterations = stats.get("iterations") or 0
        requested = run.iterations_requested
        iter_text = (
            f"{iterations:,}" if iterations == requested or not requested else f"{iterations:,} of {requested:,}"
        )
        rate = stats.get("items_per_s")
        word, good = verdict(run.numerics)
        outcome = run.outcome or "?"
        cells = [
            QTableWidgetItem(started_text(run.started)),
            QTableWidgetItem(runtime_text(run)),
            QTableWidgetItem(run.mode or "–"),
            _Number(iter_text, iterations),
            _Number(_ms(stats, "p50_ms"), stats.get("p50_ms")),
            _Number(_ms(stats, "p90_ms"), stats.get("p90_ms")),
            _Number(_ms(stats, "p99_ms"), stats.get("p99_ms")),
            _Number(_ms(stats, "mean_ms"), stats.get("mean_ms")),
            _Number(f"{rate:,.0f}" if rate else "–", rate),
            QTableWidgetItem(word),
            QTableWidgetItem(outcome),
        ]
        cells[0].setData(RECORD_ROLE, record)
        if run.runtime and not run.on_device:
            cells[1].setForeground(QColor(theme.WARN))
            cells[1].setToolTip("CPU figures: the NEFF did not run; these time the job's module on this host's CPU.")
        if good is not None:
            cells[9].setForeground(QColor(theme.GOOD if good else theme.BAD))
        cells[10].setForeground(QColor(OUTCOME_COLOURS.get(outcome, theme.ORIGINAL)))
        tip = f"{run.run_id}\n{run.path}"
        if run.reason:
            tip += f"\n{run.reason}"
        for col, cell in enumerate(cells):
            if not cell.toolTip():
                cell.setToolTip(tip)
            self.setItem(row, col, cell)

    def _on_self_item_selection_changed(self) -> None:
        self.runs_selected.emit(sorted(self.selected_runs(), key=lambda r: RunView.of(r).started or ""))


def comparison_html(a: dict[str, Any], b: dict[str, Any]) -> str:
    """p50, p90 and mean of two runs, one row each, the second's with its ratio to the first's (B / A)."""
    sa, sb = RunView.of(a).stats or {}, RunView.of(b).stats or {}
    keys = (("p50_ms", "p50"), ("p90_ms", "p90"), ("mean_ms", "mean"))

    def who(record: dict[str, Any], mark: str) -> str:
        when = started_text(RunView.of(record).started).rpartition(" ")[2]
        return f"<td><b>{mark}</b> {html.escape(kind_of(record))} · {html.escape(when)}</td>"

    def ratio(key: str) -> str:
        va, vb = sa.get(key), sb.get(key)
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va > 0:
            return f" <b>×{vb / va:.2f}</b>"
        return ""

    cell = "align='right' style='padding-left: 18px'"
    head = "".join(f"<th {cell}>{name}</th>" for _key, name in keys)
    row_a = "".join(f"<td {cell}>{_ms(sa, key)} ms</td>" for key, _name in keys)
    row_b = "".join(f"<td {cell}>{_ms(sb, key)} ms{ratio(key)}</td>" for key, _name in keys)
    return (
        "<table cellspacing='0' cellpadding='2'>"
        f"<tr><th align='left'>B / A: the later run over the earlier</th>{head}</tr>"
        f"<tr>{who(a, 'A')}{row_a}</tr><tr>{who(b, 'B')}{row_b}</tr></table>"
    )
