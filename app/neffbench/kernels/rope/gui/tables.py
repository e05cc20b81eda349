"""cos and sin tables as heatmaps (position x pair index), drawn downsampled and read out in full."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF

from neffbench.gui.widgets.hover import PointerLabel
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.plot_titles import set_title
from neffbench.gui.widgets.readable import integer_axes, keep_readable

if TYPE_CHECKING:  # the window must not wait for torch, which neffbench.kernels.rope.preview imports
    from neffbench.kernels.rope.preview import Preview


# Drawn columns per heatmap: about a screen's width. More only costs time; the numbers never depend on it.
MAX_DRAWN_POSITIONS = 2048


class TableHeatmaps(pg.GraphicsLayoutWidget):
    """Two linked heatmaps; zooming in redraws the visible positions, down to every single one."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._preview: Preview | None = None
        self.cos_plot = self._make_plot(0, "cos")
        self.sin_plot = self._make_plot(1, "sin")
        self.sin_plot.setXLink(self.cos_plot)
        self.sin_plot.setYLink(self.cos_plot)
        self.cos_image = pg.ImageItem()
        self.sin_image = pg.ImageItem()
        self.cos_plot.addItem(self.cos_image)
        self.sin_plot.addItem(self.sin_image)
        self.colour_bar = pg.ColorBarItem(
            values=(-1, 1), colorMap=pg.colormap.get("CET-D1"), interactive=False, width=14, colorMapMenu=False
        )
        self.colour_bar.setImageItem([self.cos_image, self.sin_image])
        self.colour_bar.getAxis("right").setLabel("cos, sin (no unit)", **{"font-size": "8pt"})
        self.addItem(self.colour_bar, row=0, col=1, rowspan=2)
        self.readout = self.addLabel("", row=2, col=0, colspan=2, justify="left")
        keep_readable(self, plots=2, lines=4)  # the readout's row and the layout's spacing
        self.drawn_step = 1
        self.cos_plot.vb.sigXRangeChanged.connect(self._on_view_x_range_changed)
        self.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.pointer = PointerLabel(self.cos_plot, self.sin_plot)

    def _make_plot(self, row: int, name: str) -> pg.PlotItem:
        plot = plot_item(axisItems=integer_axes("left", "bottom"))  # pairs, positions
        self.addItem(plot, row=row, col=0)
        plot.setLabel("left", f"{name}: pair index")
        plot.setLabel("bottom", "position")
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.vb.setMouseEnabled(x=True, y=False)
        return plot

    def set_preview(self, preview: Preview) -> None:
        self._preview = preview
        half = preview.rotary_dim // 2
        amplitude = max(1.0, preview.frequencies.mscale)
        self.colour_bar.setLevels((-amplitude, amplitude))
        dtype = preview.cache_dtype
        set_title(self.cos_plot, f"cos table ({dtype}, {preview.max_pos} positions x {half} pairs)")
        set_title(self.sin_plot, f"sin table ({dtype})")
        for plot in (self.cos_plot, self.sin_plot):
            plot.vb.setLimits(
                xMin=0,
                xMax=preview.max_pos,
                yMin=0,
                yMax=half,
                minXRange=min(8, preview.max_pos),
                maxXRange=preview.max_pos,
            )
        # Setting the range redraws through _on_view_x_range_changed; draw explicitly too, since
        # an unchanged range emits nothing.
        self.cos_plot.vb.setRange(xRange=(0, preview.max_pos), yRange=(0, half), padding=0)
        self._draw(0, preview.max_pos)
        self._show_default_readout()

    def _draw(self, first: float, last: float) -> None:
        preview = self._preview
        if preview is None:
            return
        span = max(1.0, last - first)
        # Draw a little beyond the view so that a short pan does not show an empty edge.
        lo, hi = int(max(0, first - span / 4)), int(min(preview.max_pos, last + span / 4 + 1))
        rows, start, step = preview.display_rows(lo, hi, MAX_DRAWN_POSITIONS)
        self.drawn_step = step
        half = preview.rotary_dim // 2
        rect = QRectF(start, 0, rows.shape[0] * step, half)
        self.cos_image.setImage(np.ascontiguousarray(rows[:, :half].T), autoLevels=False, rect=rect)
        self.sin_image.setImage(np.ascontiguousarray(rows[:, half:].T), autoLevels=False, rect=rect)

    def _show_default_readout(self) -> None:
        preview = self._preview
        if preview is None:
            self.readout.setText("")
            return
        drawn = (
            "every position drawn"
            if self.drawn_step == 1
            else (f"1 in {self.drawn_step} positions drawn (zoom in to see all; readouts use the full table)")
        )
        self.readout.setText(f"Hover for values · {drawn}")

    def _on_view_x_range_changed(self, _vb, x_range) -> None:
        self._draw(*x_range)

    def _on_scene_mouse_moved(self, pos: QPointF) -> None:
        preview = self._preview
        if preview is None:
            return
        for plot, name, offset in ((self.cos_plot, "cos", 0), (self.sin_plot, "sin", preview.rotary_dim // 2)):
            if not plot.sceneBoundingRect().contains(pos):
                continue
            point = plot.vb.mapSceneToView(pos)
            position, pair = int(np.floor(point.x())), int(np.floor(point.y()))
            if 0 <= position < preview.max_pos and 0 <= pair < preview.rotary_dim // 2:
                value, exact = preview.value(position, pair + offset)
                text = f"position {position} · pair {pair} · {name} = {value:.7g}"
                if preview.cache_dtype != "float32":
                    text += f" ({preview.cache_dtype}; float32 {exact:.7g}, error {abs(value - exact):.2g})"
                self.readout.setText(text)
                self.pointer.show(plot, pos, f"position {position}, pair {pair}<br>{name} = {value:.5g}")
                return
        self._show_default_readout()
        self.pointer.hide()
