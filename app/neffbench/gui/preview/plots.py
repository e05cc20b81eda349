"""A kernel's own preview plots: a grid of PlotWidgets, one per ``Plot``, each drawn once and re-fed with setData."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.plot_titles import set_title
from neffbench.gui.widgets.readable import IntegerAxis, plot_height

if TYPE_CHECKING:  # only for annotations: the plots arrive built
    from neffbench.kernels.plots import Plot, Series

# Data series take these in turn (matplotlib's tab10, which the RoPE panel's blue starts); references are grey.
SERIES_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
# Below this width (of the scroll area) two plots side by side get too narrow to read.
TWO_COLUMN_WIDTH = 720
# Corners the legend may take, in the order preferred when several are equally empty: (x, y) anchors
# in the view box, y = 0 at the top.
CORNERS = ((1, 0), (0, 0), (1, 1), (0, 1))


def _xy(series: Series) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(series.x, dtype=np.float64).ravel(), np.asarray(series.y, dtype=np.float64).ravel()


def occupied_points(plot: Plot) -> tuple[np.ndarray, np.ndarray]:
    """Points on everything the plot draws, dense enough that a legend box over a line or a bar contains some."""
    xs, ys = [], []
    for series in plot.series:
        if plot.kind == "bars":  # categories, drawn at 0, 1, 2, ...
            x, y = np.arange(len(series.y), dtype=np.float64), np.asarray(series.y, dtype=np.float64).ravel()
        else:
            x, y = _xy(series)
        if plot.kind == "histogram" and len(x) == len(y) + 1 and len(y):
            # A bar covers its whole height, so sample each bin from 0 up to its count.
            centres = (x[:-1] + x[1:]) / 2
            levels = np.linspace(0.0, 1.0, 9)
            xs.append(np.repeat(centres, len(levels)))
            ys.append(np.outer(y, levels).ravel())
        elif plot.kind == "bars" and len(y):
            levels = np.linspace(0.0, 1.0, 9)
            xs.append(np.repeat(x, len(levels)))
            ys.append(np.outer(y, levels).ravel())
        elif len(x) == len(y) and len(y):
            if len(x) < 200:  # a two-point reference line is still a line across the box
                t = np.linspace(0, len(x) - 1, 200)
                x, y = np.interp(t, np.arange(len(x)), x), np.interp(t, np.arange(len(y)), y)
            xs.append(x)
            ys.append(y)
    if not xs:
        return np.zeros(0), np.zeros(0)
    x, y = np.concatenate(xs), np.concatenate(ys)
    if plot.log_y:
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.log10(y)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def quietest_corner(x: np.ndarray, y: np.ndarray, width: float, height: float) -> tuple[tuple[int, int], int]:
    """The corner whose ``width`` x ``height`` box (fractions of the view) holds the fewest points, and how many."""
    if not len(x):
        return CORNERS[0], 0
    pad = 0.04  # about what auto-range adds around the data
    spans = []
    for v in (x, y):
        lo, hi = float(v.min()), float(v.max())
        span = hi - lo or 1.0
        spans.append((lo - pad * span, span * (1 + 2 * pad)))
    fx = (x - spans[0][0]) / spans[0][1]
    fy = 1.0 - (y - spans[1][0]) / spans[1][1]  # 0 at the top, as the anchors count
    scores = []
    for ax, ay in CORNERS:
        in_x = fx >= 1 - width if ax else fx <= width
        in_y = fy >= 1 - height if ay else fy <= height
        scores.append(int(np.count_nonzero(in_x & in_y)))
    best = int(np.argmin(scores))
    return CORNERS[best], scores[best]


def whole_numbers(plot: Plot, axis: str) -> bool:
    """Whether every value ``plot`` puts on ``axis`` ("x" or "y") is stored as an integer (a token index, a
    count): that axis then gets integer ticks only."""
    if plot.kind == "bars" and axis == "x":
        return False  # categories, with a tick each already
    if axis == "y" and plot.log_y:
        return False
    arrays = [np.asarray(getattr(s, axis)) for s in plot.series]
    return bool(arrays) and all(a.dtype.kind in "iub" for a in arrays)


def _pen(series: Series, index: int, width: float = 1.6):
    if series.role == "reference":
        return pg.mkPen(theme.ORIGINAL, width=1.4, style=Qt.PenStyle.DashLine)
    return pg.mkPen(SERIES_COLOURS[index % len(SERIES_COLOURS)], width=width)


class RowLegend(pg.LegendItem):
    """A legend that the plot's own layout places (in a row under the axis) rather than one anchored over the data."""

    def updateSize(self) -> None:  # noqa: N802 - pyqtgraph override
        # LegendItem sizes itself with setGeometry at (0, 0), over the title; ask the plot's layout instead.
        self.updateGeometry()


class _PlotWidget(pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__(
            plotItem=plot_item(
                axisItems={"bottom": IntegerAxis("bottom", whole=False), "left": IntegerAxis("left", whole=False)}
            )
        )
        # A title, the axes, a data area and a row of legend under it (readable.plot_height).
        self.setMinimumHeight(plot_height(1, lines=2))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # PlotWidget asks for 600 x 480; a scroll area sizes the grid by its preferred height (the notes wrap, so
        # it asks the height for the width), and would then scroll at any window height. The minimum is enough.
        return QSize(400, self.minimumHeight())


class PlotCell(QWidget):
    """One Plot: its PlotWidget and the note under it. ``items`` are made once per series slot and re-fed."""

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = title
        self.plot_widget = _PlotWidget()
        self.plot_item: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot_item.setMenuEnabled(False)
        self.plot_item.showGrid(x=True, y=True, alpha=0.2)
        self.plot_item.setClipToView(True)
        self.plot_item.setDownsampling(auto=True, mode="peak")
        # In the quietest corner of the data when one is free, else in a row under the plot (outside the data).
        self.corner_legend = self.plot_item.addLegend(
            offset=None, labelTextSize="8pt", brush=pg.mkBrush(255, 255, 255, 215), pen=pg.mkPen("#b0b0b0")
        )
        self.below_legend = RowLegend(labelTextSize="8pt", frame=False)
        # Its own width, centred under the plot, rather than entries spread over the whole width.
        self.below_legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.below_legend.layout.setContentsMargins(0, 3, 0, 0)  # empty, it takes (almost) no room
        self.plot_item.layout.addItem(self.below_legend, 4, 1)
        self.plot_item.layout.setAlignment(self.below_legend, Qt.AlignmentFlag.AlignHCenter)
        self.legend = self.corner_legend
        self.items: list[Any] = []
        self._names: list[tuple[int, str]] = []
        self._points: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
        self.legend_corner: tuple[int, int] | None = CORNERS[0]
        self.note_label = QLabel(wordWrap=True)
        self.note_label.setStyleSheet("color: #555555;")
        self.note_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 6)
        layout.setSpacing(2)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.note_label)
        self.plot_item.vb.sigResized.connect(self._on_view_box_resized)

    def set_plot(self, plot: Plot) -> None:
        item = self.plot_item
        set_title(item, plot.title, size="10pt")
        item.setLabel("bottom", plot.x_label)
        item.setLabel("left", plot.y_label)
        item.setLogMode(False, plot.log_y)
        for name, axis in (("bottom", "x"), ("left", "y")):
            item.getAxis(name).set_whole(whole_numbers(plot, axis))
        data_index = 0
        for slot, series in enumerate(plot.series):
            colour_index = data_index
            if series.role != "reference":
                data_index += 1
            self._draw(slot, plot, series, colour_index)
        for extra in self.items[len(plot.series) :]:
            item.removeItem(extra)
        del self.items[len(plot.series) :]
        self._set_legend([s.name for s in plot.series])
        self.note_label.setText(plot.note)
        self.note_label.setVisible(bool(plot.note))
        self._points = occupied_points(plot)
        self._place_legend()
        item.enableAutoRange()

    def _draw(self, slot: int, plot: Plot, series: Series, colour_index: int) -> None:
        wanted = pg.BarGraphItem if plot.kind == "bars" else pg.PlotDataItem
        if slot < len(self.items) and not isinstance(self.items[slot], wanted):
            self.plot_item.removeItem(self.items[slot])
            self.items[slot] = None
        if plot.kind == "bars":
            self._draw_bars(slot, plot, series, colour_index)
            return
        if slot == len(self.items):
            self.items.append(None)
        if self.items[slot] is None:
            self.items[slot] = self.plot_item.plot()
        curve: pg.PlotDataItem = self.items[slot]
        x, y = _xy(series)
        pen = _pen(series, colour_index)
        if plot.kind == "histogram" and len(x) == len(y) + 1:
            filled = series.role != "reference" and not plot.log_y
            brush = pg.mkBrush(pen.color().red(), pen.color().green(), pen.color().blue(), 45)
            if plot.log_y:  # an empty bin has no logarithm: a gap there (connect='finite'), not a drop to -inf
                y = np.where(y > 0, y, np.nan)
            curve.setData(
                x,
                y,
                pen=pen,
                stepMode="center",
                fillLevel=0 if filled else None,
                fillBrush=brush if filled else None,
                connect="finite",
            )
        else:
            curve.setData(x, y, pen=pen, stepMode=None, fillLevel=None, fillBrush=None, connect="finite")

    def _draw_bars(self, slot: int, plot: Plot, series: Series, colour_index: int) -> None:
        values = np.asarray(series.y, dtype=np.float64).ravel()
        labels = [str(v) for v in np.asarray(series.x).ravel()]
        n = max(1, len(plot.series))
        width = 0.8 / n
        x = np.arange(len(values)) - 0.4 + width * (slot + 0.5)
        colour = theme.ORIGINAL if series.role == "reference" else SERIES_COLOURS[colour_index % len(SERIES_COLOURS)]
        opts = {"x": x, "height": values, "width": width, "brush": pg.mkBrush(colour), "pen": pg.mkPen(colour)}
        if slot == len(self.items):
            self.items.append(None)
        if self.items[slot] is None:
            self.items[slot] = pg.BarGraphItem(**opts)
            self.plot_item.addItem(self.items[slot])
        else:
            self.items[slot].setOpts(**opts)
        self.plot_item.getAxis("bottom").setTicks([list(enumerate(labels))])

    def _set_legend(self, names: list[str]) -> None:
        wanted = [(id(item), name) for item, name in zip(self.items, names)]
        if wanted == self._names:
            return
        self._names = wanted
        self._fill(self.legend)

    def _fill(self, legend: pg.LegendItem) -> None:
        for other in (self.corner_legend, self.below_legend):
            other.clear()
        for item, (_id, name) in zip(self.items, self._names):
            legend.addItem(item, name)
        self.legend = legend
        # An empty corner legend would still draw its frame.
        self.corner_legend.setVisible(legend is self.corner_legend and bool(legend.items))

    def legend_names(self) -> list[str]:
        return [label.text for _sample, label in self.legend.items]

    def _place_legend(self) -> None:
        """Into a corner no data passes through, or under the plot; re-run when the view box changes size."""
        vb = self.plot_item.vb
        # Measure as if the legend were in the corner, so that its own row under the plot cannot flip the choice.
        below = self.below_legend.height()
        if vb.width() > 50 and vb.height() > 50 and self.legend.items:
            sizes = self._entry_sizes()
            width = (max(w for w, _ in sizes) + 16) / vb.width()
            height = (sum(h for _, h in sizes) + 16) / (vb.height() + below)
        else:  # not laid out yet: assume a box big enough that a free corner surely is one
            width, height = 0.45, 0.3
        corner, crowd = quietest_corner(*self._points, min(width, 1.0), min(height, 1.0))
        if crowd == 0:
            if self.legend is not self.corner_legend:
                self._fill(self.corner_legend)
            ax, ay = corner
            self.corner_legend.anchor(itemPos=corner, parentPos=corner, offset=(-8 if ax else 8, -8 if ay else 8))
            self.legend_corner = corner
            return
        if self.legend is not self.below_legend:
            self._fill(self.below_legend)
        self.legend_corner = None
        self._fit_columns()

    def _entry_sizes(self) -> list[tuple[float, float]]:
        hint = Qt.SizeHint.PreferredSize
        sizes = []
        for sample, label in self.legend.items:
            a, b = sample.effectiveSizeHint(hint), label.effectiveSizeHint(hint)
            sizes.append((a.width() + b.width() + 8, max(a.height(), b.height())))
        return sizes

    def _fit_columns(self) -> None:
        """As many entries side by side as fit the plot's width."""
        widths = [w for w, _ in self._entry_sizes()]
        # The row sits under the data area, not under the axis beside it; each column adds the layout's spacing.
        room = self.plot_item.vb.width() or 400.0
        gap = 2 * self.below_legend.layout.horizontalSpacing()
        columns = len(widths)
        while columns > 1 and sum(max(widths[c::columns]) for c in range(columns)) + gap * (columns - 1) > room:
            columns -= 1
        self.below_legend.setColumnCount(max(1, columns))
        # Each row of legend beyond the first takes from the data area unless the plot grows by it; never
        # shrinks again, or the legend's corner-or-row choice (which the height sways) could swing for ever.
        rows = math.ceil(len(widths) / max(1, columns))
        needed = plot_height(1, lines=2 + 1.5 * max(0, rows - 1))
        # The legend as laid out, too: older pyqtgraph (0.13.5) spaces its rows wider than the estimate.
        drawn = self.below_legend.boundingRect().height()
        needed = max(needed, plot_height(1) + math.ceil(drawn))
        if needed > self.plot_widget.minimumHeight():
            self.plot_widget.setMinimumHeight(needed)

    def _on_view_box_resized(self, _vb=None) -> None:
        self._place_legend()


class PlotGrid(QWidget):
    """Cells by plot title in two columns (one when narrow); a title seen before keeps its cell."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.cells: dict[str, PlotCell] = {}
        self.order: list[str] = []
        self.columns = 2
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(4, 4, 4, 4)
        self.grid.setHorizontalSpacing(10)
        self.grid.setVerticalSpacing(6)

    def set_plots(self, plots: list[Plot]) -> None:
        titles = [p.title for p in plots]
        cell: PlotCell | None
        for title in set(self.cells) - set(titles):
            cell = self.cells.pop(title)
            self.grid.removeWidget(cell)
            cell.deleteLater()
        for plot in plots:
            cell = self.cells.get(plot.title)
            if cell is None:
                cell = self.cells[plot.title] = PlotCell(plot.title, self)
            cell.set_plot(plot)
        self.order = titles
        self._lay_out()

    def set_columns(self, columns: int) -> None:
        if columns != self.columns:
            self.columns = columns
            self._lay_out()

    def _lay_out(self) -> None:
        for cell in self.cells.values():
            self.grid.removeWidget(cell)
        count = len(self.order)
        for i, title in enumerate(self.order):
            # An odd last plot takes the whole row rather than leave half of it empty.
            span = self.columns if i == count - 1 and i % self.columns == 0 else 1
            self.grid.addWidget(self.cells[title], i // self.columns, i % self.columns, 1, span)
        for col in range(2):
            self.grid.setColumnStretch(col, 1 if col < self.columns else 0)


class PlotScroll(QScrollArea):
    """Scrolls the grid when its rows do not fit; picks the column count from its own width, which a
    scroll bar appearing does not change (the viewport's would, and could flip the layout back and forth)."""

    def __init__(self, grid: PlotGrid, parent: QWidget | None = None):
        super().__init__(parent)
        self.grid = grid
        self.setWidget(grid)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        # Laid out again after this event, not inside it: moving widgets between grid cells while Qt is
        # still resizing them has crashed the process.
        QTimer.singleShot(0, self, self._fit_columns)

    def _fit_columns(self) -> None:
        self.grid.set_columns(2 if self.width() >= TWO_COLUMN_WIDTH else 1)
