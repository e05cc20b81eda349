"""Telling when the window has first been painted: the moment the slow work (torch, the panels) may start."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QApplication, QWidget


class FirstPaint(QObject):
    """Reports the first paint of anything in the window, then stops listening.

    It watches the whole application: a main window covered by its children may never get a
    paint event of its own.
    """

    painted = Signal()

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        app = QApplication.instance()
        assert app is not None  # a window exists
        app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget) and watched.window() is self._window:
            app = QApplication.instance()
            assert app is not None  # a window was painted
            app.removeEventFilter(self)
            self.painted.emit()
        return False
