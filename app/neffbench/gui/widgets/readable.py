"""What keeps a pane readable on a small screen: plots never shorter than their text needs (the pane scrolls
instead), cut text elided with the whole of it in a tooltip, and integer quantities with integer ticks.

Every tab uses these rather than fixing its own plots, so one change of font or of rule reaches them all.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QHelpEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QScrollArea,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

# A plot's data area holds at least this many lines of text: room for four or five y tick labels that
# stand apart, and for a curve's shape to show.
DATA_LINES = 8
# A plot's title (pyqtgraph gives its row 30 px, about two lines) and its bottom axis (tick labels, the
# axis label and the tick marks), in lines.
TITLE_LINES = 2.2
AXIS_LINES = 2.8


def line_height(font: QFont | None = None) -> int:
    """The distance between two lines of ``font`` (the application's by default), in pixels."""
    return QFontMetrics(font or QApplication.font()).lineSpacing()


def data_height(font: QFont | None = None) -> int:
    """The least height of a plot's data area: ``DATA_LINES`` lines."""
    return DATA_LINES * line_height(font)


def plot_height(plots: int = 1, *, lines: float = 0, titled: bool = True, font: QFont | None = None) -> int:
    """The least height of a view of ``plots`` stacked plots, each with its title, bottom axis and data area,
    and ``lines`` more lines of text (a readout, a legend's rows) drawn in the same view."""
    per_plot = (TITLE_LINES if titled else 0.5) + AXIS_LINES + DATA_LINES
    return math.ceil((plots * per_plot + lines) * line_height(font))


def keep_readable(view: QWidget, plots: int = 1, *, lines: float = 0, titled: bool = True) -> None:
    """Never let ``view`` (a PlotWidget or GraphicsLayoutWidget) get shorter than its plots need: put it in a
    pane that scrolls (``scrolling``) and the pane scrolls rather than squeeze it. ``lines`` counts what else
    the view draws: a row of labels in a GraphicsLayout takes about two lines with its spacing."""
    view.setMinimumHeight(max(view.minimumHeight(), plot_height(plots, lines=lines, titled=titled)))


class _Fitted(QWidget):
    """What a ``scrolling`` area holds: its height for a width is the least its content needs.

    A scroll area asks a widget with wrapping text inside for its height for the width, which Qt answers
    with the *preferred* height (a PlotWidget prefers 480 px): the pane then scrolls at any height. The
    least height is the one that matters here; any room beyond it is given by the area anyway."""

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        layout = self.layout()
        return layout.totalMinimumHeightForWidth(width) if layout is not None else super().heightForWidth(width)


def scrolling(widget: QWidget, *, sideways: bool = False) -> QScrollArea:
    """``widget`` in a frameless scroll area that fits it to the room there is and scrolls it (up and down,
    and ``sideways`` when asked) once the room is below its minimum size."""
    holder = _Fitted()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget)
    area = QScrollArea()
    area.setWidget(holder)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    if not sideways:
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def plain_axes(plot: pg.PlotWidget | pg.PlotItem) -> None:
    """Figures in their own unit on both axes: seconds stay seconds, with no "(x0.001)" rescaling of the ticks."""
    for name in ("left", "bottom"):
        plot.getAxis(name).enableAutoSIPrefix(False)


class IntegerAxis(pg.AxisItem):
    """An axis of a quantity that is a whole number (an iteration, a token, a bucket, a tap, a position):
    ticks only on whole numbers, however far the plot is zoomed in. ``whole = False`` makes it a plain axis."""

    def __init__(self, orientation: str, *, whole: bool = True, **kwargs):
        super().__init__(orientation, **kwargs)
        self.whole = whole

    def set_whole(self, whole: bool) -> None:
        if whole != self.whole:
            self.whole = whole
            self.picture = None  # drawn again with the new ticks
            self.update()

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 - pyqtgraph's names
        levels = super().tickSpacing(minVal, maxVal, size)
        if not self.whole or self.logMode:
            return levels
        return [(spacing, offset) for spacing, offset in levels if spacing >= 1] or [(1.0, 0.0)]


def integer_axes(*names: str) -> dict[str, IntegerAxis]:
    """``axisItems`` for a PlotWidget or ``addPlot``: these axes show integer ticks only."""
    return {name: IntegerAxis(name) for name in names}


def cut_text(text: str, metrics: QFontMetrics, width: int, height: int | None = None) -> bool:
    """Whether ``text`` (lines split at newlines) is wider than ``width``, or taller than ``height``."""
    lines = text.splitlines() or [""]
    if height is not None and len(lines) * metrics.lineSpacing() > height + 1:
        return True
    return any(metrics.horizontalAdvance(line) > width for line in lines)


class ElidingDelegate(QStyledItemDelegate):
    """Draws cells as Qt does, cut text elided (``…``); a cell whose text is cut shows the whole of it as its
    tooltip, above the cell's own tooltip if it has one. Header sections cut short do the same
    (``elide_with_tooltips`` installs both)."""

    def tooltip_for(self, view: QAbstractItemView, index: QModelIndex | QPersistentModelIndex) -> str | None:
        """What a tooltip over ``index`` says: the whole text when it is cut, then the cell's own tooltip."""
        own = index.data(Qt.ItemDataRole.ToolTipRole)
        own = str(own) if own else ""
        option = QStyleOptionViewItem()
        option.rect = view.visualRect(index)
        self.initStyleOption(option, index)
        text = option.text or ""
        if not text or not self._is_cut(view, option, text):
            return own or None
        return f"{text}\n\n{own}" if own and own != text else text

    def _is_cut(self, view: QAbstractItemView, option: QStyleOptionViewItem, text: str) -> bool:
        style = view.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, view)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
        return cut_text(text, option.fontMetrics, rect.width() - 2 * margin, rect.height())

    def helpEvent(self, event: QHelpEvent, view, option, index) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.ToolTip and index.isValid():
            tip = self.tooltip_for(view, index)
            if tip:
                QToolTip.showText(event.globalPos(), tip, view, view.visualRect(index))
            else:
                QToolTip.hideText()
            return True
        return super().helpEvent(event, view, option, index)


class _HeaderTips(QObject):
    """A header section whose title is cut shows the whole of it as its tooltip."""

    def __init__(self, header: QHeaderView):
        super().__init__(header)
        self.header = header
        header.viewport().installEventFilter(self)

    def tooltip_at(self, x: int) -> str | None:
        header = self.header
        section = header.logicalIndexAt(x)
        if section < 0:
            return None
        model = header.model()
        text = str(model.headerData(section, header.orientation(), Qt.ItemDataRole.DisplayRole) or "")
        own = model.headerData(section, header.orientation(), Qt.ItemDataRole.ToolTipRole)
        size = header.sectionSize(section) - 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin)
        if text and cut_text(
            text, header.fontMetrics(), size - header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMarkSize)
        ):
            return f"{text}\n\n{own}" if own else text
        return str(own) if own else None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            pos = event.pos().x() if self.header.orientation() == Qt.Orientation.Horizontal else event.pos().y()
            tip = self.tooltip_at(pos)
            if tip:
                QToolTip.showText(event.globalPos(), tip, self.header, QRect())
                return True
        return super().eventFilter(watched, event)


def elide_with_tooltips(view: QAbstractItemView) -> ElidingDelegate:
    """Cells and header sections of ``view`` elided where cut, each with its whole text in a tooltip."""
    delegate = ElidingDelegate(view)
    view.setItemDelegate(delegate)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    for name in ("header", "horizontalHeader", "verticalHeader"):
        header = getattr(view, name, lambda: None)()
        if isinstance(header, QHeaderView):
            _HeaderTips(header)
    return delegate
