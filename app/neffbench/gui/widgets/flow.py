"""Layouts that give way on a narrow window instead of widening it: rows that wrap, splitters that turn."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QWidget
from superqt import QFlowLayout


def kept_together(*widgets: QWidget) -> QWidget:
    """Widgets that wrap as one (a label and its field, Run and Cancel)."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 6, 0)
    for widget in widgets:
        row.addWidget(widget)
    return box


def flow_row(*items: QWidget) -> QWidget:
    """A widget laying ``items`` out left to right, wrapping when they do not fit its width."""
    box = QWidget()
    flow = QFlowLayout(box)
    flow.setContentsMargins(0, 0, 0, 0)
    for item in items:
        flow.addWidget(item)
    return box


class TurningSplitter(QSplitter):
    """Side by side when both panes fit their minimum widths, one above the other when they do not.

    Its minimum width is the widest pane's, not their sum, so it never sets the window's minimum:
    on a laptop screen the panes stack (fewer columns) instead of clipping each other.
    """

    def __init__(self, parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Horizontal, parent)
        self._sizes: dict[Qt.Orientation, list[int]] = {}
        self._pending = False

    def _min_widths(self) -> list[int]:
        # As Qt's layouts read a minimum: one set on the widget wins over its hint.
        return [self.widget(i).minimumWidth() or self.widget(i).minimumSizeHint().width() for i in range(self.count())]

    def side_by_side_width(self) -> int:
        return sum(self._min_widths()) + self.handleWidth() * max(0, self.count() - 1)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        if self.orientation() == Qt.Orientation.Horizontal:
            return QSize(max(self._min_widths(), default=0), hint.height())
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._turn_soon()

    def event(self, event: QEvent) -> bool:
        # A pane's minimum can grow without a resize (a longer plot title): look again.
        if event.type() == QEvent.Type.LayoutRequest:
            self._turn_soon()
        return super().event(event)

    def _turn_soon(self) -> None:
        # After the event, not inside it: re-orienting a splitter while Qt lays it out is asking for a crash.
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self._turn)

    def _turn(self) -> None:
        self._pending = False
        wanted = Qt.Orientation.Horizontal if self.width() >= self.side_by_side_width() else Qt.Orientation.Vertical
        if wanted != self.orientation():
            self._sizes[self.orientation()] = self.sizes()
            self.setOrientation(wanted)
            if wanted in self._sizes:
                self.setSizes(self._sizes[wanted])
