"""The Run view's plots: one or two runs' latency histogram and per-iteration timeline, and latency/throughput per bucket.

CPU runs are drawn in the CPU colour and named CPU in legends and titles: they time the job's module on
the host, and must never read as NeuronCore figures.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from neffbench.gui.run.history import kind_of, started_text
from neffbench.gui.widgets import theme
from neffbench.gui.widgets.deferred import Deferred, DeferredPlotWidget
from neffbench.gui.widgets.empty_plot import reset_axes
from neffbench.gui.widgets.flow import TurningSplitter
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.plot_titles import set_title
from neffbench.gui.widgets.readable import integer_axes, keep_readable, plain_axes
from neffbench.kernels.bucket_words import bucket_phrase, items_unit
from neffbench.runs.missing_buckets import not_run
from neffbench.views.run import RunView

DEVICE_COLOUR = theme.ROTATED  # NeuronCore figures
CPU_COLOUR = theme.WARN  # CPU figures: a caveat, not a device number
# The histogram's right edge (and the timeline's top): a Tukey fence, p75 + 3 IQR, but never below p95,
# so that one 50 ms hiccup does not squeeze a 0.3 ms distribution into one bar. The slowest iteration
# when the tail is short anyway.
FENCE_IQR = 3.0
FLOOR_PERCENTILE = 95
TAIL_ALLOWANCE = 1.25
MIN_BINS, MAX_BINS = 10, 80


def run_colour(record: dict[str, Any], second: bool = False) -> QColor:
    colour = QColor(DEVICE_COLOUR if RunView.of(record).on_device else CPU_COLOUR)
    return colour.lighter(165) if second else colour


def what_ran(records: list[dict[str, Any]]) -> str:
    """``CPU (not device figures)``, ``NeuronCore`` or ``CPU and NeuronCore``, for a plot's title."""
    kinds = {RunView.of(r).on_device for r in records}
    if kinds == {False}:
        return "CPU, not device figures"
    if kinds == {True}:
        return "NeuronCore"
    return "CPU and NeuronCore"


def histogram_bins(durations: list[np.ndarray], *, whole: bool = False) -> tuple[np.ndarray, float]:
    """Shared bin edges for the runs shown, and the right edge (slower iterations fall past it, unless ``whole``)."""
    together = np.concatenate(durations)
    lo, top = float(together.min()), float(together.max())
    hi = max(upper_edge(d) for d in durations if d.size)
    if whole or top <= hi * TAIL_ALLOWANCE or hi <= lo:
        hi = top
    if hi <= lo:  # every iteration took the same time
        lo, hi = lo * 0.95, hi * 1.05 or 1e-3
    bins = int(min(MAX_BINS, max(MIN_BINS, math.sqrt(together.size))))
    return np.linspace(lo, hi, bins + 1), hi


def _legend_brush() -> QBrush:
    """The plot's background, nearly opaque: a legend over a dense timeline stays readable."""
    colour = QColor(pg.getConfigOption("background"))
    colour.setAlpha(215)
    return pg.mkBrush(colour)


def upper_edge(d: np.ndarray) -> float:
    p25, p75, floor = np.percentile(d, [25, 75, FLOOR_PERCENTILE])
    return float(min(d.max(), max(p75 + FENCE_IQR * (p75 - p25), floor)))


def _durations(record: dict[str, Any]) -> np.ndarray:
    return np.asarray(RunView.of(record).durations_ms, dtype=np.float64)


def _name(record: dict[str, Any], mark: str) -> str:
    run = RunView.of(record)
    stats = run.stats or {}
    p50 = f", p50 {stats['p50_ms']:.3f} ms" if isinstance(stats.get("p50_ms"), (int, float)) else ""
    when = started_text(run.started).rpartition(" ")[2]  # the time of day; the table has the date
    return f"{mark}{kind_of(record)} · {when}{p50}"


class LatencyPlots(QWidget):
    """Histogram and timeline of up to two runs; the curves are made once and re-fed with setData. The plots are
    made on their first show or the first runs to draw, whichever comes first (``plots``)."""

    # Made with the plots (``plots.make()``).
    hist_legend: pg.LegendItem
    time_legend: pg.LegendItem
    hist_curves: list[pg.PlotDataItem]
    time_curves: list[pg.PlotDataItem]

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.histogram = DeferredPlotWidget()
        self.histogram.setObjectName("run-histogram")
        self.timeline = DeferredPlotWidget()
        self.timeline.setObjectName("run-timeline")
        for plot in (self.histogram, self.timeline):
            plot.setMinimumWidth(260)
            keep_readable(plot, lines=1)  # and a row of legend
        self.plots = Deferred(self._make_plots, self.histogram, self.timeline)
        self.note = QLabel()
        self.note.setObjectName("run-plot-note")
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        # The slow outliers, in view or not, from a box in sight rather than only from a plot's context menu.
        self.outliers_check = QCheckBox("Show the slow outliers", objectName="run-outliers")
        self.outliers_check.setToolTip(
            "Draw every iteration: the histogram reaches the slowest one and the timeline shows the spikes "
            "(off, a few slow iterations do not flatten the rest)."
        )
        self.outliers_check.setVisible(False)
        self.outliers_check.toggled.connect(self._on_outliers_check_toggled)
        self.splitter = TurningSplitter()  # the timeline under the histogram on a narrow window
        self.splitter.addWidget(self.histogram)
        self.splitter.addWidget(self.timeline)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.outliers_check)
        layout.addWidget(self.note)
        self.records: list[dict[str, Any]] = []
        self.overflow: list[int] = [0, 0]

    def _make_plots(self) -> None:
        """The two plots, drawing ``records``."""
        self.histogram.set_plot(plot_item(axisItems=integer_axes("left")))  # a count of iterations
        self.timeline.set_plot(plot_item(axisItems=integer_axes("bottom")))  # the iteration
        for plot, bottom, left in ((self.histogram, "ms per call", "iterations"), (self.timeline, "iteration", "ms")):
            plot.setLabel("bottom", bottom)
            plot.setLabel("left", left)
            plot.showGrid(x=True, y=True, alpha=0.2)
            plain_axes(plot)
        self.timeline.getPlotItem().setClipToView(True)
        self.timeline.getPlotItem().setDownsampling(auto=True, mode="peak")
        self.hist_legend = self.histogram.addLegend(offset=(-8, 8), brush=_legend_brush())
        self.time_legend = self.timeline.addLegend(offset=(-8, 8), brush=_legend_brush())
        self.hist_curves = [pg.PlotDataItem(stepMode="center", fillLevel=0) for _ in range(2)]
        self.time_curves = [pg.PlotDataItem() for _ in range(2)]
        for curve in self.hist_curves:
            self.histogram.addItem(curve)
        for curve in self.time_curves:
            self.timeline.addItem(curve)
        self._draw()

    def show_runs(self, records: list[dict[str, Any]]) -> None:
        """Draws the first two of ``records`` (with timings); the rest are left out."""
        self.records = [r for r in records if RunView.of(r).durations_ms][:2]
        if self.plots.made:
            self._draw()
        elif self.records:
            self.plots.make()  # drawn as they are made

    def _draw(self) -> None:
        records = self.records
        self.hist_legend.clear()
        self.time_legend.clear()
        durations = [_durations(r) for r in records]
        whole = self.outliers_check.isChecked()
        edges, hi = histogram_bins(durations, whole=whole) if records else (np.zeros(0), 0.0)
        self.overflow = [0, 0]
        for i in range(2):
            hist, line = self.hist_curves[i], self.time_curves[i]
            if i >= len(records):
                hist.clear()
                line.clear()
                hist.setVisible(False)
                line.setVisible(False)
                continue
            record, d = records[i], durations[i]
            colour = run_colour(record, second=i == 1)
            fill = QColor(colour)
            fill.setAlpha(70 if i == 0 else 45)
            style = Qt.PenStyle.SolidLine if i == 0 else Qt.PenStyle.DashLine
            counts, _ = np.histogram(d, bins=edges)
            self.overflow[i] = int((d > hi).sum())
            hist.setData(edges, counts, pen=pg.mkPen(colour, width=2, style=style), brush=pg.mkBrush(fill))
            line.setData(np.arange(1, d.size + 1), d, pen=pg.mkPen(colour, width=1.5 if i == 0 else 1.2, style=style))
            hist.setVisible(True)
            line.setVisible(True)
            mark = ("A: ", "B: ")[i] if len(records) == 2 else ""
            self.hist_legend.addItem(hist, _name(record, mark))
            self.time_legend.addItem(line, _name(record, mark))
        what = what_ran(records) if records else "no run selected"
        set_title(self.histogram.getPlotItem(), f"Latency histogram · {what}")
        set_title(self.timeline.getPlotItem(), f"Per-iteration latency · {what}")
        self.histogram.enableAutoRange()
        self.timeline.enableAutoRange()
        if not records:
            for plot in (self.histogram, self.timeline):
                reset_axes(plot)
        top = max((float(d.max()) for d in durations if d.size), default=0.0)
        slow = not whole and top > hi * TAIL_ALLOWANCE
        if slow:
            # Spikes run off the top rather than flatten the rest; the box below shows them.
            self.timeline.enableAutoRange(axis="x")
            self.timeline.setYRange(0, hi * 1.15, padding=0)
        self.outliers_check.setVisible(whole or slow or any(self.overflow))
        self.note.setText(self._note(records, hi))
        self.note.setVisible(bool(self.note.text()))

    def _on_outliers_check_toggled(self, _checked: bool) -> None:
        self.show_runs(self.records)

    def histogram_counts(self, i: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The bin edges and counts drawn for run ``i`` (for tests and exports)."""
        if not self.plots.made:
            return np.zeros(0), np.zeros(0)
        x, y = self.hist_curves[i].getData()
        return (np.zeros(0), np.zeros(0)) if x is None else (x, y)

    def _note(self, records: list[dict[str, Any]], hi: float) -> str:
        parts = []
        for i, record in enumerate(records):
            if self.overflow[i]:
                who = f"{('A', 'B')[i]}: " if len(records) == 2 else ""
                parts.append(f"{who}{self.overflow[i]:,} (up to {float(_durations(record).max()):.3f} ms)")
        if not parts:
            return ""
        return (
            f"Slower than {hi:.3f} ms, off the histogram's right edge and the timeline's top: {'; '.join(parts)} "
            "(Show the slow outliers draws them)."
        )


class BucketPlots(QWidget):
    """p50 latency and throughput against items per call: one point per bucket of the compile with a run.
    ``run_missing_requested(job_dirs)``: the buckets not run yet, from its "Run the missing buckets" button.
    The plots are made on their first show or the first curve to draw, whichever comes first (``plots``)."""

    run_missing_requested = Signal(list)

    # Made with the plots (``plots.make()``).
    latency_curve: pg.PlotDataItem
    throughput_curve: pg.PlotDataItem

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.latency = DeferredPlotWidget()
        self.latency.setObjectName("run-bucket-latency")
        self.throughput = DeferredPlotWidget()
        self.throughput.setObjectName("run-bucket-throughput")
        for plot in (self.latency, self.throughput):
            plot.setMinimumWidth(260)
            keep_readable(plot, lines=1)  # and the points' labels
        self.plots = Deferred(self._make_plots, self.latency, self.throughput)
        self.not_run = QLabel()
        self.not_run.setObjectName("run-bucket-not-run")
        self.not_run.setWordWrap(True)
        self.not_run.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.splitter = TurningSplitter()  # throughput under latency on a narrow window
        self.splitter.addWidget(self.latency)
        self.splitter.addWidget(self.throughput)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter, 1)
        self.run_missing_button = QPushButton("Run the missing buckets", objectName="run-missing-buckets")
        self.run_missing_button.clicked.connect(lambda: self.run_missing_requested.emit(list(self.missing)))
        missing_row = QHBoxLayout()
        missing_row.addWidget(self.not_run, 1)
        missing_row.addWidget(self.run_missing_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(missing_row)
        self.rows: list[dict[str, Any]] = []
        self.missing: list[str] = []  # the job directories of the buckets without a run
        self.points: list[dict[str, Any]] = []
        self._labels: dict[str, list[pg.TextItem]] = {"p50_ms": [], "items_per_s": []}  # reused, one per point
        self.show_curve([], None)

    def _make_plots(self) -> None:
        """The two plots, drawing ``rows``."""
        for plot, left in ((self.latency, "p50 ms per call"), (self.throughput, "items/s")):
            plot.set_plot(plot_item())
            plot.setLabel("left", left)
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.getViewBox().setDefaultPadding(0.06)
            plain_axes(plot)
        self.latency_curve = pg.PlotDataItem(symbol="o", symbolSize=9)
        self.throughput_curve = pg.PlotDataItem(symbol="s", symbolSize=9)
        self.latency.addItem(self.latency_curve)
        self.throughput.addItem(self.throughput_curve)
        self._draw()

    def show_curve(self, rows: list[dict[str, Any]], runtime: str | None) -> None:
        """``rows`` from ``history.bucket_curve``; buckets without a run are listed, not drawn."""
        done = sorted((r for r in rows if r.get("run")), key=lambda r: r["items_per_call"] or 0)
        runs = [RunView.of(r["run"]) for r in done]
        self.rows = rows
        self.points = [
            {
                "bucket": r["bucket"],
                "items_per_call": r["items_per_call"],
                "p50_ms": (run.stats or {})["p50_ms"],
                "items_per_s": (run.stats or {}).get("items_per_s"),
                "on_device": run.on_device,
                "run": run.path,
            }
            for r, run in zip(done, runs)
        ]
        if self.plots.made:
            self._draw()
        elif rows:
            self.plots.make()  # drawn as they are made
        missing = [bucket_phrase(r["bucket"]) for r in not_run(rows)]
        self.missing = [r["job_dir"] for r in not_run(rows)]
        on = f" on {runtime}" if runtime else ""
        self.not_run.setText(
            f"Not run yet{on}: {', '.join(missing)}. Run them to complete the curve: each bucket is its own job."
            if missing
            else ""
        )
        self.not_run.setVisible(bool(missing))
        self.run_missing_button.setVisible(bool(missing))
        self.run_missing_button.setToolTip(
            f"Run each of these jobs in turn{on}, with the iterations, warm-up and mode above; a failure stops the rest."
        )

    def _draw(self) -> None:
        rows = self.rows
        x = np.array([p["items_per_call"] for p in self.points], dtype=np.float64)
        log_x = x.size > 1 and x.min() > 0 and x.max() / x.min() >= 10
        colours = [QColor(DEVICE_COLOUR if p["on_device"] else CPU_COLOUR) for p in self.points]
        line = QColor(CPU_COLOUR if not any(p["on_device"] for p in self.points) else DEVICE_COLOUR)
        kinds = {p["on_device"] for p in self.points}
        what = {frozenset({False}): "CPU", frozenset({True}): "NeuronCore"}.get(frozenset(kinds), "CPU and NeuronCore")
        what = what if self.points else "no runs yet"
        unit = items_unit([r["bucket"] for r in rows]) if rows else None
        ticks = [[(math.log10(v) if log_x else v, f"{v:g}") for v in x]]
        for plot, curve, key, title in (
            (self.latency, self.latency_curve, "p50_ms", "p50 latency per bucket"),
            (self.throughput, self.throughput_curve, "items_per_s", "Throughput per bucket"),
        ):
            y = np.array([p[key] or np.nan for p in self.points], dtype=np.float64)
            plot.setLogMode(x=bool(log_x), y=False)
            curve.setData(
                x,
                y,
                pen=pg.mkPen(line, width=1.5),
                symbolBrush=[pg.mkBrush(c) for c in colours],
                symbolPen=[pg.mkPen(c) for c in colours],
            )
            set_title(plot.getPlotItem(), f"{title} · {what}")
            plot.setLabel("bottom", f"items per call ({unit})" if unit else "items per call")
            plot.getAxis("bottom").setTicks(ticks if self.points else None)
            plot.enableAutoRange()
            if not self.points:
                reset_axes(plot)
            finite = y[np.isfinite(y)]
            if finite.size:  # from zero: a latency or a rate read against nothing is easily overread
                plot.setYRange(0, float(finite.max()) * 1.18, padding=0)
            self._label_points(plot, key, np.log10(x) if log_x else x, y)

    def _label_points(self, plot: pg.PlotWidget, key: str, x: np.ndarray, y: np.ndarray) -> None:
        pool = self._labels[key]
        while len(pool) < len(x):
            item = pg.TextItem(color=pg.getConfigOption("foreground"))
            plot.addItem(item)
            pool.append(item)
        for i, item in enumerate(pool):
            shown = i < len(x) and np.isfinite(y[i])
            item.setVisible(bool(shown))
            if shown:
                # The first label leans right and the last left, so that neither runs off the plot.
                item.setAnchor((0.0 if i == 0 else 1.0 if i == len(x) - 1 else 0.5, 1.2))
                item.setText(f"{y[i]:.3f} ms" if key == "p50_ms" else f"{y[i]:,.0f}/s")
                item.setPos(float(x[i]), float(y[i]))
