"""Mouse moves over a plot, throttled, what a hover readout listens to; and the hovered value beside the pointer."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from superqt.utils import QSignalThrottler

from neffbench.gui.widgets import theme


def throttled_mouse_moves(view: pg.GraphicsView, slot: Callable[[tuple], None], rate_hz: int = 30) -> QSignalThrottler:
    """Call ``slot((pos,))`` at most ``rate_hz`` times a second while the mouse moves over ``view``'s scene.

    Not ``pg.SignalProxy``: its QTimer has no parent, so it dies whenever the garbage collector runs,
    possibly on a worker thread (a torch import), and a QTimer deleted from another thread leaves Qt a
    dangling timer that crashes the process. The throttler belongs to the view and goes with it.
    """
    throttler = QSignalThrottler(view)
    throttler.setTimeout(max(1, 1000 // rate_hz))
    last: list = [None]

    def moved(pos) -> None:
        last[0] = pos
        throttler.throttle()

    view.scene().sigMouseMoved.connect(moved)
    throttler.triggered.connect(lambda: slot((last[0],)) if last[0] is not None else None)
    return throttler


class PointerLabel:
    """The hovered value written beside the pointer, inside the plot it is over (one label per plot, shown
    on one at a time), turned to stay inside the plot near its right and bottom edges."""

    def __init__(self, *plots: pg.PlotItem):
        background = QColor(pg.getConfigOption("background"))
        background.setAlpha(225)
        self.labels: dict[pg.PlotItem, pg.TextItem] = {}
        for plot in plots:
            label = pg.TextItem(
                color=pg.getConfigOption("foreground"), fill=pg.mkBrush(background), border=pg.mkPen(theme.ORIGINAL)
            )
            label.setZValue(100)
            label.hide()
            plot.addItem(label, ignoreBounds=True)
            self.labels[plot] = label

    def show(self, plot: pg.PlotItem, scene_pos: QPointF, html: str) -> None:
        """``html`` next to ``scene_pos`` over ``plot``; the other plots' labels hidden."""
        for other, label in self.labels.items():
            label.setVisible(other is plot)
        label = self.labels[plot]
        label.setHtml(html)
        area = plot.vb.sceneBoundingRect()
        right = scene_pos.x() > area.center().x()
        low = scene_pos.y() > area.center().y()
        # Anchors past 0 and 1 leave a gap of a few pixels between the pointer and the box.
        label.setAnchor((1.05 if right else -0.05, 1.1 if low else -0.1))
        label.setPos(plot.vb.mapSceneToView(scene_pos))

    def hide(self) -> None:
        for label in self.labels.values():
            label.hide()

    def shown(self) -> pg.TextItem | None:
        """The label on show, if any."""
        return next((label for label in self.labels.values() if label.isVisible()), None)
