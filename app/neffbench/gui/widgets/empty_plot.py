"""An empty plot's axes: auto-range leaves a plot's range as it was when nothing is left to fit, so a plot
emptied (another workdir, a run that failed) would keep the axes of data no longer drawn."""

from __future__ import annotations

import pyqtgraph as pg

EMPTY_RANGE = (0.0, 1.0)


def reset_axes(plot: pg.PlotWidget) -> None:
    """The axes of a plot with nothing on it, and auto-range on again for the next data."""
    plot.setRange(xRange=EMPTY_RANGE, yRange=EMPTY_RANGE, padding=0)
    plot.enableAutoRange()
