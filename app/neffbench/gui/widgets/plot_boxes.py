"""Plots whose right-click menu is made on the first right-click: pyqtgraph makes each view's menu (two forms of axis
options) as the view is made, over a third of what a plot costs to make, for a menu most plots never show (or have
turned off).

Every plot the workbench makes comes from ``plot_item`` (or ``plot_widget``), so that each has such a view (a
colour bar, a plot pyqtgraph makes itself, keeps pyqtgraph's).
"""

from __future__ import annotations

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu


class MenuOnDemandViewBox(pg.ViewBox):
    """A ViewBox whose menu ("View All", the axes' options, the mouse mode) is made when first asked for."""

    menu: ViewBoxMenu | None

    def __init__(self, *args, enableMenu: bool = True, **kwargs):  # noqa: N803 - pyqtgraph's name
        super().__init__(*args, enableMenu=False, **kwargs)
        self.state["enableMenu"] = enableMenu

    def _applyMenuEnabled(self) -> None:  # noqa: N802 - pyqtgraph's name; what setMenuEnabled and setState call
        if not self.menuEnabled() and self.menu is not None:
            self.menu.setParent(None)
            self.menu = None

    def getMenu(self, ev):  # noqa: N802 - pyqtgraph's name
        if self.menu is None and self.menuEnabled():
            self.menu = ViewBoxMenu(self)
            self.updateViewLists()  # the other named views, for its "Link axis" choices
        return self.menu

    def getContextMenus(self, event):  # noqa: N802 - pyqtgraph's name; a child item's right-click asks for these
        return self.getMenu(event).actions() if self.menuEnabled() else []


def plot_item(**kwargs) -> pg.PlotItem:
    """A PlotItem (``kwargs`` as pyqtgraph's: ``axisItems``, ``title``…) on a view whose menu is made on demand."""
    return pg.PlotItem(viewBox=MenuOnDemandViewBox(), **kwargs)


def plot_widget(**kwargs) -> pg.PlotWidget:
    """A PlotWidget showing ``plot_item(**kwargs)``."""
    return pg.PlotWidget(plotItem=plot_item(**kwargs))
