"""The Numerics view's chart: every tap's error against both references over execution order, on a log scale of
times the tolerance (1 is the tolerance, drawn), the first divergent tap marked per reference, a second compare
overlaid. The taps are labelled by module path; what says which line is which sits under the chart, never over
its axes or its points. The items are made once and re-fed with setData."""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QApplication, QLabel, QSizePolicy, QVBoxLayout, QWidget

from neffbench.gui.numerics import model
from neffbench.gui.widgets import theme
from neffbench.gui.widgets.plot_boxes import plot_widget
from neffbench.gui.widgets.readable import IntegerAxis, keep_readable
from neffbench.taps.compare import REFERENCES

COLOURS = {"vs_eager": theme.ROTATED, "vs_float64": "#e07b00"}
LABEL_GAP_PX = 12  # between two module paths on the axis


class ModuleAxis(IntegerAxis):
    """The chart's bottom axis: each tap by its module path (the tail of it), as many as fit side by side without
    touching; a tap index is no name a user knows."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.modules: list[str] = []

    def set_modules(self, modules: list[str]) -> None:
        self.modules = [model.axis_label(m) for m in modules]
        self.picture = None  # drawn again with the new names
        self.update()

    def _label_px(self) -> int:
        metrics = QFontMetrics(self.style.get("tickFont") or QApplication.font())
        return max((metrics.horizontalAdvance(m) for m in self.modules), default=0) + LABEL_GAP_PX

    def tickValues(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 - pyqtgraph's names
        if not self.modules:
            return super().tickValues(minVal, maxVal, size)
        per_tap = size / max(maxVal - minVal, 1e-9)  # pixels between two neighbouring taps
        step = max(1, math.ceil(self._label_px() / max(per_tap, 1e-9)))
        first = max(0, math.ceil(minVal / step) * step)
        shown = [float(i) for i in range(first, min(len(self.modules) - 1, math.floor(maxVal)) + 1, step)]
        return [(float(step), shown)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        if not self.modules:
            return super().tickStrings(values, scale, spacing)
        return [self.modules[int(v)] if 0 <= int(v) < len(self.modules) else "" for v in values]


def _symbols(curve: model.Plotted) -> list[str]:
    return ["x" if inf else "o" for inf in curve.infinite]


def _brushes(curve: model.Plotted, colour: QColor) -> list[Any]:
    # Hollow where the point is clamped to the floor (an exact tap), filled elsewhere.
    return [pg.mkBrush(None) if exact else pg.mkBrush(colour) for exact in curve.exact]


def _tip_of(x: float, y: float, data: Any) -> str:
    return data[1]


class Series:
    """One compare's curve against one reference: a line and its points (the points carry tips and clicks)."""

    def __init__(self, plot: pg.PlotItem, reference: str, overlay: bool):
        colour = QColor(COLOURS[reference])
        if overlay:
            colour = colour.lighter(140)
        self.colour = colour
        style = Qt.PenStyle.DashLine if overlay else Qt.PenStyle.SolidLine
        self.line = pg.PlotCurveItem(pen=pg.mkPen(colour, width=1.5, style=style), connect="finite")
        self.points = pg.ScatterPlotItem(
            size=8 if not overlay else 6, pen=pg.mkPen(colour), hoverable=True, tip=_tip_of
        )
        plot.addItem(self.line)
        plot.addItem(self.points)

    def set(self, x: np.ndarray, curve: model.Plotted | None, tips: list[str]) -> None:
        if curve is None or not len(x):
            self.line.setData([], [])
            self.points.setData([])
            return
        y = np.log10(curve.y)  # NaN (no figure) stays a gap
        self.line.setData(x, y)
        shown = ~np.isnan(y)
        spots = [
            {"pos": (float(x[i]), float(y[i])), "data": (int(x[i]), tips[i]), "symbol": s, "brush": b}
            for i, (s, b) in enumerate(zip(_symbols(curve), _brushes(curve, self.colour)))
            if shown[i]
        ]
        self.points.setData(spots)


class ErrorChart(QWidget):
    """``show_compares(primary, overlay)``; ``tap_clicked(index)`` when a point is clicked; ``select(index)``."""

    cursor: pg.InfiniteLine  # type: ignore[assignment]  # shadows QWidget.cursor(), never called on this chart

    tap_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.axis = ModuleAxis()
        self.widget = plot_widget(axisItems={"bottom": self.axis})
        self.widget.setObjectName("numerics-chart")
        self.widget.setMinimumWidth(300)
        keep_readable(self.widget, titled=False)
        self.plot = self.widget.getPlotItem()
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setLabel("left", "× tolerance (log)")
        self.plot.setLabel("bottom", "module, in execution order (hover a point: its whole path)")
        self.plot.getAxis("left").setLogMode(False, True)  # the data are log10 already: ticks read 10^n
        self.plot.setMenuEnabled(False)
        # Named in the legend under the chart: a label on the line would sit over the points and the axis.
        self.tolerance = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen(theme.BAD, width=1, style=Qt.PenStyle.DotLine))
        self.plot.addItem(self.tolerance)
        self.series = {(r, o): Series(self.plot, r, o) for o in (False, True) for r in REFERENCES}
        self.firsts = {r: self._first_line(r) for r in REFERENCES}
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen("#888888", width=1))
        self.cursor.setVisible(False)
        self.plot.addItem(self.cursor)
        for series in self.series.values():
            series.points.sigClicked.connect(self._on_points_clicked)
        self.legend = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.legend.setObjectName("numerics-legend")
        self.note = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.note.setObjectName("numerics-chart-note")
        self.note.setStyleSheet("color: #555555;")
        self.note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.widget, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.note)
        self.primary: dict[str, Any] | None = None
        self.show_compares(None)

    def _first_line(self, reference: str) -> tuple[pg.InfiniteLine, pg.ScatterPlotItem]:
        """A dashed line at the first divergent tap and a star on its point, in the reference's colour."""
        colour = COLOURS[reference]
        line = pg.InfiniteLine(angle=90, pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine))
        star = pg.ScatterPlotItem(symbol="star", size=18, pen=pg.mkPen(colour, width=1.5), brush=pg.mkBrush(None))
        for item in (line, star):
            item.setVisible(False)
            self.plot.addItem(item)
        return line, star

    # ---- what it shows ----

    def show_compares(self, primary: dict[str, Any] | None, overlay: dict[str, Any] | None = None) -> None:
        """``primary``'s taps at x = 0..n-1 against both references; ``overlay``'s matched by module path."""
        self.primary = primary
        self.cursor.setVisible(False)
        legend: list[str] = []
        docs = [d for d in (primary, overlay) if d]
        floor, ceiling = model.bounds(model.all_values(docs))
        curves: list[model.Plotted] = []
        unmatched = 0
        for is_overlay, doc in ((False, primary), (True, overlay)):
            x: np.ndarray = np.zeros(0)
            index = np.zeros(0, dtype=int)
            if doc is not None and primary is not None:
                if is_overlay:
                    index, x, unmatched = model.overlay_positions(primary, doc)
                else:
                    index = np.arange(len(doc.get("taps") or []))
                    x = index.astype(float)
            taps = [(doc.get("taps") or [])[i] for i in index] if doc else []
            for reference in REFERENCES:
                series = self.series[(reference, is_overlay)]
                skipped = doc is None or reference in (doc.get("skipped") or {})
                curve = None if skipped else model.plotted(taps, reference, floor, ceiling)
                what = model.measured(doc)  # the device's, or the CPU's: each compare as it was run
                series.set(x, curve, [self._tip(t, reference, is_overlay, what) for t in taps])
                if curve is not None and len(x) and not np.isnan(curve.y).all():
                    curves.append(curve)
                    dash = "╌╌" if is_overlay else "━━"
                    tail = " (overlay)" if is_overlay else ""
                    legend.append(
                        f"<span style='color:{series.colour.name()}'>{dash}</span> "
                        f"{escape(what)} vs {reference[3:]}{tail}"
                    )
        if curves:
            legend.append(f"<span style='color:{theme.BAD}'>┈┈</span> tolerance (1×)")
        legend += self._mark_firsts(primary)
        modules = [str(t.get("module")) for t in (primary or {}).get("taps") or []]
        self.axis.set_modules(modules)
        notes = [model.clamp_note(curves)] if curves else []
        if overlay is not None and unmatched:
            notes.append(f"{unmatched} of the overlay's taps are not in this compare (matched by module path).")
        self.legend.setText(" &nbsp; ".join(legend))
        self.legend.setVisible(bool(legend))
        self.note.setText(" ".join(escape(n) for n in notes if n))
        self.note.setVisible(bool(self.note.text()))
        self.plot.setYRange(np.log10(floor), np.log10(ceiling), padding=0.05)
        # Half a tap of room at each end: the first and last points stand clear of the axes.
        self.plot.setXRange(-0.5, max(len(modules) - 0.5, 0.5), padding=0)

    def _tip(self, tap: dict[str, Any], reference: str, overlay: bool, what: str) -> str:
        value = model.times_tolerance(tap, reference)
        figures = tap.get(reference) or {}
        said = figures.get("problem") or (f"{value:.3g}× the tolerance" if value is not None else "no figure")
        ok = model.verdict_of(figures)
        verdict = "not compared" if ok is None else "ok" if ok else "FAIL"
        return (
            f"{tap.get('module')}{' (overlay)' if overlay else ''}\n"
            f"{what} {model.LABELS[reference]}: {said} — {verdict}"
        )

    def _mark_firsts(self, primary: dict[str, Any] | None) -> list[str]:
        """Mark each reference's first divergent tap; what the legend says of them."""
        said = []
        for reference, (line, star) in self.firsts.items():
            index = model.first_index(primary, reference) if primary else None
            line.setVisible(index is not None)
            star.setVisible(index is not None)
            if index is None or primary is None:
                star.setData([])
                continue
            line.setPos(index)
            x, y = self.series[(reference, False)].line.getData()
            star.setData([float(index)], [float(y[index])])
            module = escape(str(primary["taps"][index].get("module")))
            colour = COLOURS[reference]
            whose = f" of {escape(model.measured(primary))}" if primary.get("measured") == "eager" else ""
            said.append(
                f"<span style='color:{colour}'>☆ first divergent{whose} vs {reference[3:]}: <b>{module}</b></span>"
            )
        return said

    def first_marked(self, reference: str) -> int | None:
        """The tap the chart marks first divergent against ``reference`` (None: none marked)."""
        line, _ = self.firsts[reference]
        return int(round(line.value())) if line.isVisible() else None

    def select(self, index: int | None) -> None:
        self.cursor.setVisible(index is not None)
        if index is not None:
            self.cursor.setPos(index)

    def points_of(self, reference: str, overlay: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The drawn points' x and y (times the tolerance, clamped), for tests and for reading back."""
        x, y = self.series[(reference, overlay)].line.getData()
        if x is None:
            return np.zeros(0), np.zeros(0)
        return np.asarray(x), np.power(10.0, np.asarray(y))

    def _on_points_clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.tap_clicked.emit(int(points[0].data()[0]))
