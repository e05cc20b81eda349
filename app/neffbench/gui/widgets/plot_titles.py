"""Plot titles that are never clipped: a view is kept at least as wide as its widest title needs."""

from __future__ import annotations

import math

import pyqtgraph as pg

# Beside the left axis: the plot's own margins and some room at the right edge.
MARGIN = 24
# A title wider than this is clipped rather than let one plot widen the window past a laptop screen.
MAX_WIDTH = 620
_BASE = "neffbench_base_minimum_width"  # the view's own minimum, before any title widened it
BESIDE = "neffbench_beside_plots"  # width of what a view shows beside its plots' column (a legend)


def set_title(plot: pg.PlotItem, text: str, **style) -> None:
    """Title ``plot`` and set the minimum width of the view that shows it to fit every title in it
    (pyqtgraph clips a title wider than its plot instead of asking the layout for room)."""
    plot.setTitle(text, **style)
    scene = plot.scene()
    for view in scene.views() if scene is not None else ():
        fit(view)


def fit(view: pg.GraphicsView) -> None:
    """Set ``view``'s minimum width to what its titles and what sits beside its plots (``BESIDE``) need."""
    if view.property(_BASE) is None:
        view.setProperty(_BASE, view.minimumWidth())
    needed = _needed(view.scene()) + int(view.property(BESIDE) or 0)
    view.setMinimumWidth(max(int(view.property(_BASE)), min(needed, MAX_WIDTH)))


def _needed(scene) -> int:
    need = 0.0
    for item in scene.items():
        if isinstance(item, pg.PlotItem) and item.isVisible() and item.titleLabel.isVisible():
            axis = item.getAxis("left")
            axis_w = axis.width() if axis.isVisible() else 0
            need = max(need, item.titleLabel.item.boundingRect().width() + axis_w + MARGIN)
    return int(math.ceil(need))
