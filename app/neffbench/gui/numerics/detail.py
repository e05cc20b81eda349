"""One tap of a compare: its source line and its histograms (device values against the reference's, and the
difference), from the arrays the compare's figures were computed from (read off the GUI thread)."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from neffbench.gui.numerics import model
from neffbench.gui.numerics.chart import COLOURS
from neffbench.gui.widgets import background, theme
from neffbench.gui.widgets.deferred import Deferred, DeferredPlotWidget
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.readable import integer_axes, keep_readable
from neffbench.taps.compare import REFERENCES

DEVICE_COLOUR = theme.GOOD
EMPTY = "Select a tap (a row or a point of the chart) for its histograms and its source line."


def _histogram_view(name: str) -> DeferredPlotWidget:
    view = DeferredPlotWidget()
    view.setObjectName(name)
    view.setMinimumWidth(150)
    keep_readable(view, titled=False)
    return view


def _histogram_plot(plot: DeferredPlotWidget, bottom: str) -> None:
    plot.set_plot(plot_item(axisItems=integer_axes("left")))  # a count
    plot.setLabel("bottom", bottom)
    plot.setLabel("left", "count")
    plot.getAxis("bottom").enableAutoSIPrefix(False)  # its "(x1e-12)" is clipped on a plot this narrow
    plot.showGrid(x=True, y=True, alpha=0.2)
    plot.setMenuEnabled(False)


def _figures_line(tap: dict[str, Any]) -> str:
    """``eager: ok, 0× · float64: FAIL, 61.6×, cos 0.99999``: the row's figures, for a table scrolled out of view."""
    parts = []
    for reference in REFERENCES:
        figures = tap.get(reference)
        if not isinstance(figures, dict):
            continue
        value, cosine = model.number(figures.get("times_tolerance")), model.number(figures.get("cosine"))
        what = figures.get("problem") or (f"{value:.3g}× tol" if value is not None else "?")
        cos = f", cos {cosine:.6f}" if cosine is not None and cosine < 1 else ""
        ok = model.verdict_of(figures)
        colour = "#777777" if ok is None else theme.GOOD if ok else theme.BAD
        verdict = "not compared" if ok is None else "ok" if ok else "FAIL"
        parts.append(f"{reference[3:]}: <span style='color:{colour}'>{verdict}</span>, {escape(str(what))}{cos}")
    return " · ".join(parts)


def source_html(tap: dict[str, Any]) -> tuple[str, str]:
    """The tap's line in rich text, with the line itself when its file is here, and the whole path for a tooltip:
    for a library module the user's own line that called it, its class's forward said after it."""
    shown = model.where(tap)
    if not shown:
        return "no source recorded", ""
    short, line = model.source_text(shown)
    code = f" <code>{escape(line)}</code>" if line else " (the file is not here to read)"
    text = f"<b>{escape(short)}</b>{code}"
    if tap.get("called_at") and tap.get("source"):
        forward, _ = model.source_text(tap["source"])
        text += (
            f"<br><small>where {escape(str(tap.get('module')))} ({escape(str(tap.get('class') or '?'))}) is "
            f"called; its forward is {escape(forward)}</small>"
        )
    return text, str(shown)


class TapDetail(QWidget):
    """``show_tap(document, index)``; ``loaded`` once the histograms show the tap's values (or why not). The
    histograms are made on their first show or the first values to draw, whichever comes first (``plots``)."""

    loaded = Signal()

    # Made with the histograms (``plots.make()``).
    device_curve: pg.PlotDataItem
    reference_curve: pg.PlotDataItem
    diff_curve: pg.PlotDataItem

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel(EMPTY, wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.title.setObjectName("numerics-tap")
        self.source = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.source.setObjectName("numerics-source")
        self.source.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reference_combo = QComboBox()
        self.reference_combo.setObjectName("numerics-reference")
        for reference in REFERENCES:
            self.reference_combo.addItem(model.LABELS[reference], reference)
        self.reference_combo.setToolTip(
            "The reference whose values the histograms set against the measured ones (the device's, or the CPU's)."
        )
        self.values_plot = _histogram_view("numerics-values")
        self.diff_plot = _histogram_view("numerics-difference")
        self.plots = Deferred(self._make_plots, self.values_plot, self.diff_plot)
        self.note = QLabel(wordWrap=True)
        self.note.setObjectName("numerics-detail-note")
        self.note.setStyleSheet("color: #555555;")
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.reference_combo, 0, Qt.AlignmentFlag.AlignTop)
        plots = QHBoxLayout()
        plots.addWidget(self.values_plot, 1)
        plots.addWidget(self.diff_plot, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.source)
        layout.addLayout(plots, 1)
        layout.addWidget(self.note)
        self.reference_combo.currentIndexChanged.connect(self._on_reference_combo_current_index_changed)
        self._document: dict[str, Any] | None = None
        self._index: int | None = None
        self._values: model.Values | None = None
        self._token = 0
        self.loading = False
        self.clear()

    def _make_plots(self) -> None:
        """The two histograms, drawing the values shown."""
        _histogram_plot(self.values_plot, "value")
        _histogram_plot(self.diff_plot, "difference")
        self.device_curve = pg.PlotDataItem(stepMode="center", pen=pg.mkPen(DEVICE_COLOUR, width=1.5))
        self.reference_curve = pg.PlotDataItem(stepMode="center", pen=pg.mkPen(COLOURS["vs_float64"], width=1.5))
        self.diff_curve = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen(theme.BAD, width=1.5))
        self.diff_curve.setBrush(pg.mkBrush(QColor(198, 40, 40, 60)))
        self.values_plot.addItem(self.device_curve)
        self.values_plot.addItem(self.reference_curve)
        self.diff_plot.addItem(self.diff_curve)
        self._paint()

    def clear(self) -> None:
        self._document, self._index = None, None
        self._token += 1
        self.loading = False
        self.title.setText(EMPTY)
        self.source.clear()
        self.note.clear()
        self._draw(None)

    def show_tap(self, document: dict[str, Any], index: int) -> None:
        self._document, self._index = document, index
        tap = document["taps"][index]
        shape = "×".join(str(n) for n in tap.get("shape") or []) or "scalar"
        self.title.setText(
            f"<b>{escape(str(tap.get('module')))}</b> ({escape(str(tap.get('class') or '?'))}) · "
            f"{escape(str(tap.get('dtype')))} · {shape}<br>{_figures_line(tap)}"
        )
        text, tip = source_html(tap)
        self.source.setText(text)
        self.source.setToolTip(tip)
        skipped = document.get("skipped") or {}
        model = self.reference_combo.model()
        assert isinstance(model, QStandardItemModel)  # a combo box's own
        for i, reference in enumerate(REFERENCES):
            model.item(i).setEnabled(reference not in skipped)
        if self.reference_combo.currentData() in skipped:
            compared = [i for i, r in enumerate(REFERENCES) if r not in skipped]
            self.reference_combo.blockSignals(True)  # loaded once, below
            self.reference_combo.setCurrentIndex(compared[0] if compared else 0)
            self.reference_combo.blockSignals(False)
        self._load()

    def reference(self) -> str:
        return str(self.reference_combo.currentData())

    def _on_reference_combo_current_index_changed(self, _index: int) -> None:
        self._load()

    def _load(self) -> None:
        if self._document is None or self._index is None:
            return
        self._token += 1
        self.loading = True
        self.note.setText("Reading the arrays…")
        tap = self._document["taps"][self._index]
        background.start(
            self._values_of,
            self._token,
            self._document,
            tap,
            self.reference(),
            returned=self._on_values_returned,
            errored=self._on_values_errored,
        )

    @staticmethod
    def _values_of(token: int, document: dict[str, Any], tap: dict[str, Any], reference: str) -> tuple[int, Any]:
        try:
            return token, model.tap_values(document, tap, reference)
        except (OSError, ValueError) as exc:  # ArraysError is a ValueError
            return token, str(exc)

    def _on_values_returned(self, answer: tuple[int, Any]) -> None:
        token, values = answer
        if token != self._token:
            return  # another tap chosen since
        self.loading = False
        if isinstance(values, str):
            self.note.setText(f"No histograms: {values}")
            self._draw(None)
        else:
            self._draw(values)
        self.loaded.emit()

    def _on_values_errored(self, exc: BaseException) -> None:
        self.loading = False
        self.note.setText(f"No histograms: {exc}")
        self._draw(None)
        self.loaded.emit()

    def _draw(self, values: model.Values | None) -> None:
        self._values = values
        if self.plots.made:
            self._paint()
        elif values is not None:
            self.plots.make()  # drawn as they are made

    def _paint(self) -> None:
        values = self._values
        if values is None:
            for curve in (self.device_curve, self.reference_curve, self.diff_curve):
                curve.setData([], [])
            return
        edges = model.shared_edges(values.device, values.reference)
        device, _ = model.histogram(values.device, edges)
        reference, _ = model.histogram(values.reference, edges)
        self.device_curve.setData(edges, device)
        self.reference_curve.setData(edges, reference)
        self.reference_curve.setPen(
            pg.mkPen(COLOURS[f"vs_{values.reference_name}"], width=1.5, style=Qt.PenStyle.DashLine)
        )
        difference = values.device - values.reference
        counts, diff_edges = model.histogram(difference)
        self.diff_curve.setData(diff_edges, counts)
        finite = difference[np.isfinite(difference)]
        worst = float(np.abs(finite).max()) if finite.size else float("nan")
        same = (
            f"identical to the {values.reference_name} reference"
            if worst == 0
            else f"largest |difference| from {values.reference_name} {worst:.3g}"
        )
        # Said under the plots rather than in a legend, which would cover the bars of a plot this small.
        ref_colour = COLOURS[f"vs_{values.reference_name}"]
        what = escape(values.measured)
        self.note.setText(
            f"<span style='color:{DEVICE_COLOUR}'>━ {what}</span> <span style='color:{ref_colour}'>╌ "
            f"{values.reference_name}</span> <span style='color:{theme.BAD}'>▮ {what} − {values.reference_name}</span>"
            f" · {values.device.size:,} values; {same}"
            + ("" if finite.size == difference.size else f"; {difference.size - finite.size:,} not finite (not drawn)")
        )
