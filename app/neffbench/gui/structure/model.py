"""The Structure view's tree: a Qt item model over a laid structure (and, side by side, another job's), asked for
the rows the view shows and nothing more, so a 32-layer model opens as fast as a RoPE kernel."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor

from neffbench.gui.widgets import theme
from neffbench.structure import cells, diff, table
from neffbench.structure.layers import Laid

PATH_ROLE = Qt.ItemDataRole.UserRole + 1  # the module's path
SORT_ROLE = Qt.ItemDataRole.UserRole + 2  # a figure to sort by
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 3  # what the search box matches: path and class
FIRST_DIVERGENT = QColor("#ffd9d9")
Index = QModelIndex | QPersistentModelIndex


class _Side:
    """A column of the other job's figures, by path."""

    def __init__(self, heading: str, cell: Any, key: Any, tip: str) -> None:
        self.heading, self.cell, self.key, self.tip = heading, cell, key, tip
        self.numeric = heading.startswith(("time", "Δ"))
        self.group = "b"


class StructureModel(QAbstractItemModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.laid: Laid | None = None
        self.other: dict[str, diff.LayerDiff] = {}
        self.columns: list[Any] = []
        self._paths: list[str] = []  # internal ids: a row's path by number
        self._ids: dict[str, int] = {}

    def show(self, laid: Laid | None, other: Laid | None = None) -> None:
        """Show ``laid`` (None: nothing), with ``other``'s figures beside it when given."""
        self.beginResetModel()
        self.laid = laid
        self.other = {r.path: r for r in diff.diff(laid, other)} if laid is not None and other is not None else {}
        have = table.groups(laid) if laid is not None else set()
        self.columns = [c for c in cells.COLUMNS if c.group in have]
        if self.other:
            self.columns += self._other_columns()
        self._paths = [n.path for n in laid.structure.nodes] if laid is not None else []
        self._ids = {p: i for i, p in enumerate(self._paths)}
        self.endResetModel()

    def _other_columns(self) -> list[_Side]:
        def time_b(path: str) -> str:
            row = self.other.get(path)
            return cells.duration(row.b.time.seconds) if row and row.b and row.b.time else ""

        def change(path: str) -> str:
            row = self.other.get(path)
            value = row.time_change if row else None
            return "" if value is None else f"{value:+.1%}"

        def error_b(path: str) -> str:
            row = self.other.get(path)
            return cells.error(row.b.vs_float64) if row and row.b else ""

        def differs(path: str) -> str:
            row = self.other.get(path)
            return "; ".join(row.changes) if row else ""

        def time_change_key(path: str) -> float | None:
            row = self.other.get(path)
            return row.time_change if row else None

        return [
            _Side("time B", time_b, lambda p: None, "the other job's device time"),
            _Side("Δ time", change, time_change_key, "the other job's time against this one's"),
            _Side("vs float64 B", error_b, lambda p: None, "the other job's error against float64"),
            _Side("what differs", differs, lambda p: None, "what differs in the other job"),
        ]

    # ---- the tree ----

    def path_of(self, index: Index) -> str | None:
        return self._paths[index.internalId()] if index.isValid() else None

    def index_of(self, path: str, column: int = 0) -> QModelIndex:
        if self.laid is None or path not in self._ids:
            return QModelIndex()
        node = self.laid.structure.by_path[path]
        if node.parent is None:
            return self.createIndex(0, column, self._ids[path])
        row = self.laid.structure.by_path[node.parent].children.index(path)
        return self.createIndex(row, column, self._ids[path])

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008 - Qt's signature
        if self.laid is None or column >= len(self.columns):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, self._ids[""]) if row == 0 else QModelIndex()
        children = self.laid.structure.by_path[self._paths[parent.internalId()]].children
        if not 0 <= row < len(children):
            return QModelIndex()
        return self.createIndex(row, column, self._ids[children[row]])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid() or self.laid is None:
            return QModelIndex()
        node = self.laid.structure.by_path[self._paths[index.internalId()]]
        return self.index_of(node.parent) if node.parent is not None else QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's name
        if self.laid is None or parent.column() > 0:
            return 0
        if not parent.isValid():
            return 1
        return len(self.laid.structure.by_path[self._paths[parent.internalId()]].children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's name
        return len(self.columns)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: N802, B008 - Qt's name
        return self.rowCount(parent) > 0

    # ---- the cells ----

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        column = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.heading
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.tip or None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.laid is None:
            return None
        path = self._paths[index.internalId()]
        column = self.columns[index.column()]
        layer = self.laid.layers[path]
        side = isinstance(column, _Side)
        if role == Qt.ItemDataRole.DisplayRole:
            return column.cell(path) if side else column.cell(layer)
        if role == PATH_ROLE:
            return path
        if role == SEARCH_ROLE:
            return f"{path} {layer.node.cls}".lower()
        if role == SORT_ROLE:
            key = column.key(path) if side else column.key(layer)
            return key if key is not None else float("-inf")
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and layer.first_divergent:
            return QBrush(FIRST_DIVERGENT)
        if role == Qt.ItemDataRole.ForegroundRole:
            text = column.cell(path) if side else column.cell(layer)
            if text.startswith("FAIL"):
                return QBrush(QColor(theme.BAD))
            if side and column.heading == "what differs" and text:
                return QBrush(QColor(theme.WARN))
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 0:
            node = layer.node
            where = f"\n{node.where}" if node.where else ""
            first = (
                "\nfirst divergent " + ", ".join(r.replace("_", " ") for r in layer.first_divergent)
                if layer.first_divergent
                else ""
            )
            return f"{path or '(the root)'} ({node.cls}){where}{first}"
        return None


class SearchProxy(QSortFilterProxyModel):
    """Rows whose path or class holds the search text, with the rows above them; sorted by figure."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterRole(SEARCH_ROLE)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

    def lessThan(self, left: Index, right: Index) -> bool:  # noqa: N802 - Qt's name
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        if a == b or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return left.row() < right.row()  # no figure: the tree's own (call) order
        return a < b
