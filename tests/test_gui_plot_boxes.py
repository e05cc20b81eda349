"""A plot's right-click menu is made on the first right-click (widgets/plot_boxes.py), and is the menu pyqtgraph
makes: "View All", the axes' options, the mouse mode, the plot's options and Export; every plot of the window
has such a view, none with its menu made yet."""

from __future__ import annotations

import itertools

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QMenu

from neffbench.gui.widgets.plot_boxes import MenuOnDemandViewBox, plot_item, plot_widget
from tests.gui_fixtures import each_tab

pytestmark = [pytest.mark.gui]
_names = itertools.count()


def _texts(menu: QMenu) -> list:
    """The menu's entries as shown: each action's text, a submenu as (its title, its entries)."""
    out: list = []
    for action in menu.actions():
        sub = action.menu()
        if isinstance(sub, QMenu):
            out.append((sub.title(), _texts(sub)))
        elif action.isSeparator():
            out.append("---")
        elif action.text():
            out.append(action.text())
    return out


def _right_click(qtbot, plot: pg.PlotWidget) -> list:
    """Right-click the middle of ``plot``'s data area as a user does; the entries of the menu that pops up."""
    plot.resize(400, 300)
    plot.show()
    qtbot.waitExposed(plot)
    at = QPointF(plot.mapFromScene(plot.getViewBox().sceneBoundingRect().center()))
    viewport = plot.viewport()
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        # Sent, not QTest's click: the view leaves a press it hands to its scene unaccepted, which QTest warns of.
        right = Qt.MouseButton.RightButton
        buttons = right if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton
        event = QMouseEvent(kind, at, viewport.mapToGlobal(at), right, buttons, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(viewport, event)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=5_000)
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    try:
        return _texts(menu)
    finally:
        menu.close()


def test_a_plot_makes_no_menu_until_right_clicked_and_then_the_one_pyqtgraph_makes(qtbot):
    eager, lazy = pg.PlotWidget(), plot_widget()
    for plot in (eager, lazy):
        qtbot.addWidget(plot)
    assert isinstance(lazy.getViewBox(), MenuOnDemandViewBox) and lazy.getViewBox().menu is None
    lazy.setMenuEnabled(False)
    lazy.setMenuEnabled(True)  # turned off and on again: still made only when asked for
    assert lazy.getViewBox().menu is None
    shown = _right_click(qtbot, lazy)
    assert shown == _right_click(qtbot, eager)
    assert shown[0] == "View All" and "Export..." in shown
    assert [title for title, _ in (e for e in shown if isinstance(e, tuple))] == [
        "X axis",
        "Y axis",
        "Mouse Mode",
        "Plot Options",
    ]
    assert lazy.getViewBox().menu is not None


def test_a_menu_made_later_lists_the_named_views_to_link_and_a_turned_off_menu_shows_nothing(qtbot):
    other = f"plot-boxes-{next(_names)}"
    named = plot_widget(name=other)
    lazy = plot_widget()
    for plot in (named, lazy):
        qtbot.addWidget(plot)
    view = lazy.getViewBox()
    menu = view.getMenu(None)
    links = [menu.ctrl[0].linkCombo.itemText(i) for i in range(menu.ctrl[0].linkCombo.count())]
    assert other in links
    lazy.setMenuEnabled(False)
    assert view.menu is None and view.getMenu(None) is None and view.getContextMenus(None) == []


def test_every_plot_of_the_window_makes_its_menu_on_demand(window, qtbot):
    views = []
    for _name, page in each_tab(window, qtbot, (1280, 800)):
        for graphics in page.findChildren(pg.GraphicsView):
            views += [
                item
                for item in graphics.scene().items()
                if isinstance(item, pg.ViewBox) and not isinstance(item.parentItem(), pg.ColorBarItem)
            ]
    assert len(views) >= 10
    assert all(isinstance(view, MenuOnDemandViewBox) and view.menu is None for view in views)
    assert isinstance(plot_item().getViewBox(), MenuOnDemandViewBox)
