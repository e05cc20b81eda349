"""Layouts that give way on a narrow window instead of widening it: rows that wrap, splitters that turn,
stacks sized by the page on show."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLayout, QSplitter, QStackedWidget, QWidget


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
    # Here, not at the top: importing superqt imports all of it (a tenth of a second), and the window's first
    # paint needs this module's stack but no flow row.
    from superqt import QFlowLayout

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
        return [w.minimumWidth() or w.minimumSizeHint().width() for w in self._panes()]

    def _panes(self) -> list[QWidget]:
        return [w for i in range(self.count()) if (w := self.widget(i)) is not None]

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
            else:
                self._share_by_stretch(wanted)

    def _share_by_stretch(self, orientation: Qt.Orientation) -> None:
        """The first time in an orientation, the room goes by the panes' stretch factors (if any are set),
        not by the other orientation's sizes (a stage list that was narrow must not become the tall pane)."""
        policies = [w.sizePolicy() for w in self._panes()]
        vertical = orientation == Qt.Orientation.Vertical
        stretches = [p.verticalStretch() if vertical else p.horizontalStretch() for p in policies]
        room = sum(self.sizes())
        if any(stretches) and room:
            self.setSizes([room * s // sum(stretches) for s in stretches])


class CurrentPageStack(QStackedWidget):
    """A stack as wide (and tall) as the page it shows needs, not as its largest page ever shown: one wide
    page (the module kernel's form) must not widen the column for every other page after it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        # QStackedLayout would otherwise set the stack's own minimum to the largest page's.
        layout = self.layout()
        assert layout is not None  # a stack's QStackedLayout
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.currentChanged.connect(self._on_self_current_changed)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        page = self.currentWidget()
        if page is None:
            return super().minimumSizeHint()
        # As Qt's layouts read a minimum: one set on the widget wins over its hint.
        hint = page.minimumSizeHint()
        return QSize(page.minimumWidth() or hint.width(), page.minimumHeight() or hint.height())

    def _on_self_current_changed(self, _index: int) -> None:
        self.updateGeometry()  # the column may narrow now
