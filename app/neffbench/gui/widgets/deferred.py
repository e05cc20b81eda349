"""Plots made when first needed: each view is made with its pane, its plot when a view is first shown or when its
owner has data to draw (``Deferred.make``), whichever comes first.

The window makes every tab after its first paint, and a plot (pyqtgraph's PlotItem: axes, view, options menu) is
most of what a tab costs to make: the plots of a tab never opened, or with nothing to draw yet, would be made for
nothing on every start. The views themselves are cheap, and made at once: a pane is laid out as it always was (a
view's size hints are a PlotWidget's), and Tab reaches them where they stand.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QSizePolicy, QWidget

# What PlotWidget.__init__ points at its PlotItem (pyqtgraph 0.14); a test holds this to pyqtgraph's own.
PLOT_METHODS = (
    "addItem",
    "removeItem",
    "autoRange",
    "clear",
    "setAxisItems",
    "setXRange",
    "setYRange",
    "setRange",
    "setAspectLocked",
    "setMouseEnabled",
    "setXLink",
    "setYLink",
    "enableAutoRange",
    "disableAutoRange",
    "setLimits",
    "register",
    "unregister",
    "viewRect",
)


class DeferredPlotWidget(pg.PlotWidget):
    """A PlotWidget made without its PlotItem, which ``set_plot`` gives it; until then it shows an empty view."""

    def __init__(self, parent: QWidget | None = None):
        # PlotWidget.__init__, all but its PlotItem.
        self.plotItem = None
        pg.GraphicsView.__init__(self, parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.enableMouse(False)

    def set_plot(self, plot: pg.PlotItem) -> None:
        """Show ``plot`` (once): the rest of PlotWidget.__init__."""
        assert self.plotItem is None, "a view's plot is set once"
        self.plotItem = plot
        self.setCentralItem(plot)
        for name in PLOT_METHODS:
            setattr(self, name, getattr(plot, name))
        plot.sigRangeChanged.connect(self.viewRangeChanged)

    def close(self) -> bool:
        if self.plotItem is None:  # no plot to close, as PlotWidget.close would
            self.setParent(None)
            return pg.GraphicsView.close(self)
        return super().close()


class Deferred(QObject):
    """Calls ``build()`` once: when one of ``views`` is first shown, or at the first ``make()``. The owner makes it
    on its first data, and ``build`` draws what the owner keeps (on a show, the empty plots)."""

    def __init__(self, build: Callable[[], None], *views: QWidget):
        super().__init__(views[0])
        self._build = build
        self._views = views
        self.made = False
        for view in views:
            view.installEventFilter(self)

    def make(self) -> None:
        if self.made:
            return
        self.made = True
        for view in self._views:
            view.removeEventFilter(self)
        self._build()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Show:
            self.make()
        return False
