"""Per-frequency view: wavelength and inverse frequency of each pair, coloured by what scaling did to it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QSizePolicy

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.hover import PointerLabel, throttled_mouse_moves
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.plot_titles import MAX_WIDTH
from neffbench.gui.widgets.readable import integer_axes, keep_readable

if TYPE_CHECKING:  # the window must not wait for torch, which neffbench.kernels.rope.preview imports
    from neffbench.kernels.rope.preview import Preview

BAND_LABELS = {
    "unchanged": "unchanged (extrapolates)",
    "interpolated": "interpolated (1/factor)",
    "blended": "blended",
}
# Pens of the marks, by what they mark; the legend shows each with its value.
_MARK_PENS = {
    "max_pos": pg.mkPen(theme.ORIGINAL, width=1.5, style=Qt.PenStyle.DotLine),
    "original": pg.mkPen(theme.BAD, width=1.5, style=Qt.PenStyle.DotLine),
    "edge0": pg.mkPen(theme.BAND_COLOURS["blended"], width=1.5, style=Qt.PenStyle.DashLine),
    "edge1": pg.mkPen(theme.BAND_COLOURS["blended"], width=1.5, style=Qt.PenStyle.DashDotLine),
}
_AXIS_WIDTH = 64  # both plots alike, so their pair indices line up and the label clears the ticks
# Each axis in its unit; small type, so a label stays shorter than its plot is tall on a short screen.
_AXIS_LABELS = {"wavelength": "wavelength (positions)", "inv_freq": "inv_freq (rad/position)"}
_LABEL_STYLE = {"font-size": "8pt"}
LEGEND_COLUMNS = (2, 3)  # the fewest and the most columns of the legend; as many as the width has room for
_BASE_WIDTH = "neffbench_frequencies_base_width"  # the view's own minimum width, before its legend widened it


class _LegendSample(pg.ItemSample):
    """A legend sample that only explains: one entry stands for items in both plots (or for a mark's
    style), so clicking it cannot hide "the" curve the way pyqtgraph's default sample does."""

    def mouseClickEvent(self, event) -> None:
        event.ignore()


class FrequencyPlots(pg.GraphicsLayoutWidget):
    """Wavelength (top) and inverse frequency (bottom) per pair index, log scale, scaled vs unscaled."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._preview: Preview | None = None
        # The title and the legend above the plots, which then have the view's whole width.
        self.title = self.addLabel("", row=0, col=0, size="11pt")
        # Both plots' x is the pair index.
        self.wavelength_plot = plot_item(axisItems=integer_axes("bottom"))
        self.inv_freq_plot = plot_item(axisItems=integer_axes("bottom"))
        self.addItem(self.wavelength_plot, row=2, col=0)
        self.addItem(self.inv_freq_plot, row=3, col=0)
        self.inv_freq_plot.setXLink(self.wavelength_plot)
        self.curves: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem, pg.PlotDataItem]] = {}
        self.cursors: list[pg.InfiniteLine] = []
        for plot, name in ((self.wavelength_plot, "wavelength"), (self.inv_freq_plot, "inv_freq")):
            plot.setLogMode(False, True)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setLabel("left", _AXIS_LABELS[name], **_LABEL_STYLE)
            plot.setLabel("bottom", "pair index", **_LABEL_STYLE)
            plot.getAxis("left").setWidth(_AXIS_WIDTH)
            base = plot.plot(pen=pg.mkPen(theme.ORIGINAL, width=1, style=Qt.PenStyle.DashLine))
            scaled = plot.plot(pen=pg.mkPen(theme.ROTATED, width=1.5))
            points = plot.plot(pen=None, symbol="o", symbolSize=5)
            self.curves[name] = (base, scaled, points)
            cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(theme.ORIGINAL, width=1))
            cursor.hide()
            plot.addItem(cursor, ignoreBounds=True)
            self.cursors.append(cursor)
        self.original_line = self._mark(self.wavelength_plot, 0, "original")
        # llama3 with low_freq_factor 1 puts an edge on the original context: dots over dashes show both.
        self.original_line.setZValue(1)
        self.max_pos_line = self._mark(self.wavelength_plot, 0, "max_pos")
        # Band edges: llama3's are wavelengths (top plot), yarn's ramp ends are pair indices (both plots).
        self.edge_lines = [self._mark(self.wavelength_plot, 0, f"edge{i}") for i in range(2)]
        self.pair_edge_lines = [
            (self._mark(self.wavelength_plot, 90, f"edge{i}"), self._mark(self.inv_freq_plot, 90, f"edge{i}"))
            for i in range(2)
        ]
        # The legend has a row of its own, in columns: inside the plots every corner holds data for some spec.
        self.legend = pg.LegendItem(labelTextSize="8pt", sampleType=_LegendSample, colCount=LEGEND_COLUMNS[0])
        self.legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.addItem(self.legend, row=1, col=0)
        self.ci.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignHCenter)
        self._samples = self._make_samples()
        self.summary = self.addLabel("", row=4, col=0, justify="left")
        self.readout = self.addLabel("", row=5, col=0, justify="left", size="8pt")
        keep_readable(self, plots=2, lines=4, titled=False)  # the summary's and the readout's rows, the spacing
        self.pointer = PointerLabel(self.wavelength_plot, self.inv_freq_plot)
        # Throttled: a readout per repaint is plenty, however fast the mouse sends moves.
        self._hover = throttled_mouse_moves(self, self._on_scene_mouse_moved)

    def _mark(self, plot: pg.PlotItem, angle: int, pen: str) -> pg.InfiniteLine:
        line = pg.InfiniteLine(angle=angle, movable=False, pen=_MARK_PENS[pen])
        line.hide()
        plot.addItem(line, ignoreBounds=True)
        return line

    @staticmethod
    def _make_samples() -> dict[str, pg.GraphicsObject]:
        """Stand-ins the legend draws: never added to a plot, so no entry sits over data."""
        samples: dict[str, pg.GraphicsObject] = {
            "scaled": pg.PlotDataItem(pen=pg.mkPen(theme.ROTATED, width=1.5)),
            "base": pg.PlotDataItem(pen=pg.mkPen(theme.ORIGINAL, width=1, style=Qt.PenStyle.DashLine)),
        }
        for band, colour in theme.BAND_COLOURS.items():
            samples[band] = pg.ScatterPlotItem(symbol="o", size=7, brush=colour, pen=None)
        for name, pen in _MARK_PENS.items():
            samples[name] = pg.PlotDataItem(pen=pen)
        return samples

    def set_preview(self, preview: Preview) -> None:
        self._preview = preview
        f = preview.frequencies
        scaling = f.factor is not None
        index = np.arange(len(f.inv_freq))
        brushes = [pg.mkBrush(theme.BAND_COLOURS[b]) for b in f.bands]
        for name, scaled, base in (
            ("wavelength", f.wavelength, f.base_wavelength),
            ("inv_freq", f.inv_freq, f.base_inv_freq),
        ):
            base_curve, scaled_curve, points = self.curves[name]
            base_curve.setData(index, base)
            base_curve.setVisible(scaling)  # without scaling it would hide under the scaled curve
            scaled_curve.setData(index, scaled)
            points.setData(index, scaled, symbolBrush=brushes, symbolPen=None)
        # Log-mode plots place other items in log10 coordinates.
        self.max_pos_line.setPos(np.log10(preview.max_pos))
        self.max_pos_line.show()
        original = f.original_max_position_embeddings
        self.original_line.setVisible(original is not None)
        if original is not None:
            self.original_line.setPos(np.log10(original))
        wavelength_edges = [b for b in f.boundaries if b.axis == "wavelength"]
        pair_edges = [b for b in f.boundaries if b.axis == "pair"]
        for i, line in enumerate(self.edge_lines):
            line.setVisible(i < len(wavelength_edges))
            if i < len(wavelength_edges):
                line.setPos(np.log10(wavelength_edges[i].value))
        for i, lines in enumerate(self.pair_edge_lines):
            for line in lines:
                line.setVisible(i < len(pair_edges))
                if i < len(pair_edges):
                    line.setPos(pair_edges[i].value)
        self.title.setText(
            f"Frequencies: {preview.spec.rope.rope_type} scaling" + (f", factor {f.factor:g}" if f.factor else "")
        )
        self._fill_legend(preview, wavelength_edges or pair_edges)
        self._fit_legend()
        # The legend counts the pairs in each band; the summary says which side of the edges is which.
        if not scaling:
            text = f"{len(f.bands)} pairs, no scaling: every frequency is the base one"
        else:
            text = f.band_rule or " · ".join(f"{f.bands.count(b)} {b}" for b in BAND_LABELS if b in f.bands)
        if f.mscale != 1.0:
            text += f" · table scaled by mscale {f.mscale:.4g}"
        self.summary.setText(text)
        self._show_default_readout()
        for plot in (self.wavelength_plot, self.inv_freq_plot):
            plot.enableAutoRange()

    def _fit_legend(self) -> None:
        """As many legend columns as the width holds; the view never narrower than the fewest need, nor shorter
        than the title's and the legend's rows above the plots and the plots' own least height."""
        entries = self.legend.items if hasattr(self, "legend") else []  # a resize while __init__ builds the view
        if not entries:
            return
        widest = max(label.boundingRect().width() + sample.boundingRect().width() for sample, label in entries) + 12
        columns = max(LEGEND_COLUMNS[0], min(LEGEND_COLUMNS[1], int((self.width() - 24) // widest)))
        if columns != self.legend.columnCount:
            self.legend.setColumnCount(columns)
        rows = math.ceil(len(entries) / columns)
        self.setMinimumHeight(0)
        keep_readable(self, plots=2, lines=10 + 1.8 * rows, titled=False)
        self.setProperty(_BASE_WIDTH, self.property(_BASE_WIDTH) or self.minimumWidth())
        wide = max(LEGEND_COLUMNS[0] * widest, self.title.item.boundingRect().width()) + 24
        self.setMinimumWidth(max(int(self.property(_BASE_WIDTH)), min(int(wide), MAX_WIDTH)))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_legend()

    def _fill_legend(self, preview: Preview, edges: list) -> None:
        """One entry for every curve and mark drawn, in the order a reader needs them."""
        f = preview.frequencies
        scaling = f.factor is not None
        samples, legend = self._samples, self.legend
        legend.clear()
        legend.addItem(samples["scaled"], "as compiled (scaled)" if scaling else "as compiled (no scaling)")
        if scaling:
            legend.addItem(samples["base"], f"unscaled (base {preview.spec.rope.base:g})")
        for band, label in BAND_LABELS.items():
            n = f.bands.count(band)
            if n:
                label = label if scaling else "each pair's frequency"
                legend.addItem(samples[band], f"{label}: {n} pair{'s' if n != 1 else ''}")
        legend.addItem(samples["max_pos"], f"max positions {preview.max_pos}")
        if f.original_max_position_embeddings is not None:
            legend.addItem(samples["original"], f"original context {f.original_max_position_embeddings}")
        for i, edge in enumerate(edges):
            legend.addItem(samples[f"edge{i}"], edge.label)
        # LegendItem sizes itself with setGeometry, which also moves it to (0, 0), over the plot: have the
        # layout place it again (on its next pass, as for any size change).
        legend.updateGeometry()

    # ---- hover ----

    def pair_at(self, scene_pos: QPointF) -> int | None:
        """The pair index under a scene position inside either plot's data area, or None."""
        f = self._preview.frequencies if self._preview is not None else None
        if f is None:
            return None
        for plot in (self.wavelength_plot, self.inv_freq_plot):
            if plot.vb.sceneBoundingRect().contains(scene_pos):
                pair = round(plot.vb.mapSceneToView(scene_pos).x())
                return pair if 0 <= pair < len(f.inv_freq) else None
        return None

    def readout_text(self, pair: int) -> str:
        assert self._preview is not None  # a pair is read from a preview drawn
        f = self._preview.frequencies
        band = f.bands[pair]
        # Two short lines rather than one long one: a label sets its layout's minimum width.
        text = f"pair {pair}: <span style='color:{theme.BAND_COLOURS[band]}'><b>{band}</b></span>"
        if f.factor is not None and band != "unchanged":
            text += f" (unscaled: wavelength {f.base_wavelength[pair]:.4g}, inv_freq {f.base_inv_freq[pair]:.4g})"
        return (
            text + f"<br>wavelength {f.wavelength[pair]:.5g} positions · inv_freq {f.inv_freq[pair]:.5g} rad/position"
        )

    def pointer_text(self, plot: pg.PlotItem, pair: int) -> str:
        """What the label beside the pointer says: the pair and the figure of the plot it is over."""
        assert self._preview is not None  # the pointer is over a pair only once a preview is drawn
        f = self._preview.frequencies
        if plot is self.wavelength_plot:
            return f"pair {pair}<br>wavelength {f.wavelength[pair]:.4g} positions"
        return f"pair {pair}<br>inv_freq {f.inv_freq[pair]:.4g} rad/position"

    def _show_default_readout(self) -> None:
        self.readout.setText("Hover a pair for its band,<br>wavelength and inverse frequency")
        self.pointer.hide()
        for cursor in self.cursors:
            cursor.hide()

    def _on_scene_mouse_moved(self, args: tuple) -> None:
        pair = self.pair_at(args[0])
        if pair is None:
            self._show_default_readout()
            return
        self.readout.setText(self.readout_text(pair))
        plot = next(p for p in (self.wavelength_plot, self.inv_freq_plot) if p.vb.sceneBoundingRect().contains(args[0]))
        self.pointer.show(plot, args[0], self.pointer_text(plot, pair))
        for cursor in self.cursors:
            cursor.setPos(pair)
            cursor.show()
