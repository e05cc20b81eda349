"""Per-frequency view: wavelength and inverse frequency of each pair, coloured by what scaling did to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from neffbench.gui import theme

if TYPE_CHECKING:  # the window must not wait for torch, which neffbench.kernels.rope.preview imports
    from neffbench.kernels.rope.preview import Preview

BAND_LABELS = {
    "unchanged": "unchanged (extrapolates)",
    "interpolated": "interpolated (1/factor)",
    "blended": "blended",
}


class FrequencyPlots(pg.GraphicsLayoutWidget):
    """Wavelength (top) and inverse frequency (bottom) per pair index, log scale, scaled vs unscaled."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.wavelength_plot = self.addPlot(row=0, col=0)
        self.inv_freq_plot = self.addPlot(row=1, col=0)
        self.inv_freq_plot.setXLink(self.wavelength_plot)
        self.curves: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem, pg.PlotDataItem]] = {}
        for plot, name, unit in ((self.wavelength_plot, "wavelength", "positions"),
                                 (self.inv_freq_plot, "inv_freq", "rad / position")):
            plot.setLogMode(False, True)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setLabel("left", f"{name} ({unit})")
            base = plot.plot(pen=pg.mkPen(theme.ORIGINAL, width=1, style=Qt.PenStyle.DashLine))
            scaled = plot.plot(pen=pg.mkPen(theme.ROTATED, width=1.5))
            points = plot.plot(pen=None, symbol="o", symbolSize=5)
            self.curves[name] = (base, scaled, points)
        self.inv_freq_plot.setLabel("bottom", "pair index")
        # Top right of the inverse-frequency plot is the one corner no curve passes through.
        self.legend = self.inv_freq_plot.addLegend(offset=(-10, 10), labelTextSize="8pt",
                                                     brush=pg.mkBrush(255, 255, 255, 200))
        self._band_samples = {band: pg.ScatterPlotItem(symbol="o", size=7, brush=theme.BAND_COLOURS[band], pen=None)
                              for band in BAND_LABELS}
        self.original_line = self._hline(theme.BAD, "original_max_position_embeddings {value:g}")
        self.max_pos_line = self._hline(theme.ORIGINAL, "max positions {value:g}")
        self.summary = self.addLabel("", row=2, col=0, justify="left")

    def _hline(self, colour: str, label: str) -> pg.InfiniteLine:
        line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DotLine),
                               label=label, labelOpts={"position": 0.98, "color": colour, "anchors": [(1, 0), (1, 0)]})
        self.wavelength_plot.addItem(line, ignoreBounds=True)
        return line

    def set_preview(self, preview: Preview) -> None:
        f = preview.frequencies
        index = np.arange(len(f.inv_freq))
        brushes = [pg.mkBrush(theme.BAND_COLOURS[b]) for b in f.bands]
        for name, scaled, base in (("wavelength", f.wavelength, f.base_wavelength),
                                   ("inv_freq", f.inv_freq, f.base_inv_freq)):
            base_curve, scaled_curve, points = self.curves[name]
            base_curve.setData(index, base)
            scaled_curve.setData(index, scaled)
            points.setData(index, scaled, symbolBrush=brushes, symbolPen=None)
        # Log-mode plots place other items in log10 coordinates.
        self.max_pos_line.setPos(np.log10(preview.max_pos))
        self.max_pos_line.label.setFormat(f"max positions {preview.max_pos}")
        original = f.original_max_position_embeddings
        self.original_line.setVisible(original is not None)
        if original is not None:
            self.original_line.setPos(np.log10(original))
            self.original_line.label.setFormat(f"original_max_position_embeddings {original}")
        self.wavelength_plot.setTitle(f"Frequencies: {preview.spec.rope.rope_type} scaling"
                                      + (f", factor {f.factor:g}" if f.factor else ""))
        counts = {b: f.bands.count(b) for b in BAND_LABELS}
        self.legend.clear()
        if f.factor is not None:
            self.legend.addItem(self.curves["inv_freq"][0], "unscaled")
        for band, n in counts.items():
            if n and (f.factor is not None or band != "unchanged"):
                self.legend.addItem(self._band_samples[band], BAND_LABELS[band])
        if f.factor is None:
            text = f"{len(f.bands)} pairs, no scaling: every frequency is the base one"
        else:
            text = " · ".join(f"{n} {b}" for b, n in counts.items() if n)
        if f.mscale != 1.0:
            text += f" · table scaled by mscale {f.mscale:.4g}"
        self.summary.setText(text)
        for plot in (self.wavelength_plot, self.inv_freq_plot):
            plot.enableAutoRange()
