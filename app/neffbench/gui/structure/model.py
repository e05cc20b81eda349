"""The Structure view's tree: a QStandardItemModel filled from rows worded off the GUI thread, so painting asks
Qt's own model for every cell (a Python model is asked seven times per cell on each paint).

It fills in parts: the levels a view opens on first, then a few dozen rows per turn of the event loop, each small
subtree built apart and attached at once, so a 32-layer model never holds the GUI thread long. Anything that needs
every row (a search, a sort, a path not yet filled) finishes the filling first.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel

from neffbench.gui.widgets import theme
from neffbench.structure.tree_rows import Heading, Row, Rows

PATH_ROLE = Qt.ItemDataRole.UserRole + 1  # the module's path (on the module column)
SORT_ROLE = Qt.ItemDataRole.UserRole + 2  # a cell's figure to sort by, negated: Qt puts cells without one last
ORDER_ROLE = Qt.ItemDataRole.UserRole + 3  # the row's place in call order among its siblings
FIRST_DIVERGENT = QColor("#ffd9d9")
ROWS_PER_TURN = 60  # rows filled per turn of the event loop: a few milliseconds
Index = QModelIndex | QPersistentModelIndex
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


class StructureModel(QStandardItemModel):
    """``filled`` once every row is in."""

    filled = Signal()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.shown: Rows | None = None
        self.columns: tuple[Heading, ...] = ()
        self._items: dict[str, QStandardItem] = {}  # each filled row's module item, by path
        self._pending: deque[str] = deque()  # paths whose rows are still to be attached, breadth first
        self._sizes: dict[str, int] = {}  # rows in each module's subtree
        self._order: dict[str, int] = {}  # each module's place among its siblings in call order
        self._bad = QBrush(QColor(theme.BAD))
        self._warn = QBrush(QColor(theme.WARN))
        self._marked = QBrush(FIRST_DIVERGENT)
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._on_timer_timeout)

    def show(self, shown: Rows | None) -> None:
        """Show ``shown``'s rows (None: nothing): the first levels now, the rest in parts."""
        self._timer.stop()
        self.clear()
        self.shown, self._items, self._pending = shown, {}, deque()
        self.columns = shown.columns if shown is not None else ()
        if shown is None:
            return
        self.setSortRole(SORT_ROLE)
        self.setHorizontalHeaderLabels([c.heading for c in self.columns])
        for k, column in enumerate(self.columns):
            if column.tip:
                self.setHeaderData(k, Qt.Orientation.Horizontal, column.tip, Qt.ItemDataRole.ToolTipRole)
        self._sizes = _sizes(shown)
        self._order = {child: k for kids in shown.children.values() for k, child in enumerate(kids)}
        self._pending.append("")
        self._fill(ROWS_PER_TURN)

    @property
    def complete(self) -> bool:
        return self.shown is not None and not self._pending

    def fill_all(self) -> None:
        """Every row in, now."""
        if self._pending:
            self._fill(len(self._sizes))

    def _on_timer_timeout(self) -> None:
        self._fill(ROWS_PER_TURN)

    def _fill(self, budget: int) -> None:
        """Attach up to about ``budget`` rows: a subtree that small whole, a bigger module's row alone (its children
        queued)."""
        assert self.shown is not None
        children = self.shown.children
        while self._pending and budget > 0:
            path = self._pending.popleft()
            whole = self._sizes[path] <= ROWS_PER_TURN
            row = self._row(path, whole)
            parent = self.shown.parents[path]
            (self.invisibleRootItem() if parent is None else self._items[parent]).appendRow(row)
            budget -= self._sizes[path] if whole else 1
            if not whole:
                self._pending.extend(children[path])
        if self._pending:
            self._timer.start()
        else:
            self.filled.emit()

    def _row(self, path: str, whole: bool) -> list[QStandardItem]:
        """``path``'s row of items (with its subtree's rows under it when ``whole``), attached to no model yet."""
        assert self.shown is not None
        row = self.shown.rows[path]
        items = [self._item(row, k) for k in range(len(self.columns))]
        first = items[0]
        first.setData(path, PATH_ROLE)
        first.setData(self._order.get(path, 0), ORDER_ROLE)
        first.setToolTip(row.tip)
        self._items[path] = first
        if whole:
            for child in self.shown.children[path]:
                first.appendRow(self._row(child, True))
        return items

    def _item(self, row: Row, column: int) -> QStandardItem:
        text = row.texts[column]
        item = QStandardItem(text)
        key = row.keys[column]
        if key is not None:
            item.setData(-float(key), SORT_ROLE)
        if self.columns[column].numeric:
            item.setTextAlignment(_RIGHT)
        if text.startswith("FAIL"):
            item.setForeground(self._bad)
        elif text and self.columns[column].heading == "what differs":
            item.setForeground(self._warn)
        if row.marked:
            item.setBackground(self._marked)
        return item

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Each module's children by ``column``'s figure, largest first when descending (rows without one last);
        -1: the call order again."""
        if self.shown is None:
            return
        self.fill_all()
        if column < 0 or column >= len(self.columns):
            self.setSortRole(ORDER_ROLE)
            super().sort(0, Qt.SortOrder.AscendingOrder)
        else:  # the keys are negated: ascending on them is largest first
            self.setSortRole(SORT_ROLE)
            flipped = Qt.SortOrder.AscendingOrder
            super().sort(column, flipped if order == Qt.SortOrder.DescendingOrder else Qt.SortOrder.DescendingOrder)

    def matching(self, text: str) -> set[str] | None:
        """The paths a search for ``text`` keeps, and every module above them (None: no search, all of them)."""
        return self.shown.matching(text) if self.shown is not None else None

    def path_of(self, index: Index) -> str | None:
        return index.sibling(index.row(), 0).data(PATH_ROLE) if index.isValid() else None

    def index_of(self, path: str, column: int = 0) -> QModelIndex:
        """The cell of ``path``'s row in ``column`` (invalid: no such module); fills what is not filled yet."""
        if self.shown is None or path not in self.shown.rows:
            return QModelIndex()
        if path not in self._items:
            self.fill_all()
        return self._items[path].index().siblingAtColumn(column)


def _sizes(shown: Rows) -> dict[str, int]:
    """Rows in each module's subtree (itself included)."""
    sizes: dict[str, int] = {}
    for path in reversed(list(shown.rows)):  # the tree's order: every child after its parent
        sizes[path] = 1 + sum(sizes[c] for c in shown.children[path])
    return sizes
