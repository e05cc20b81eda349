"""Mouse moves over a plot, throttled: what a hover readout listens to."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from superqt.utils import QSignalThrottler


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
