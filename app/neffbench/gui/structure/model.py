"""The Structure view's tree: a Qt item model over a laid structure (and, side by side, another job's), asked for
the rows the view shows and nothing more, so a 32-layer model opens as fast as a RoPE kernel.

It sorts itself (a figure's column, largest first, among each module's children) and says which rows a search
keeps (the view hides the others): a sort-filter proxy over a Python model asks for every row's parent tens of
thousands of times on each keystroke.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from neffbench.gui.widgets import theme
from neffbench.structure import cells, diff, table
from neffbench.structure.layers import Laid

PATH_ROLE = Qt.ItemDataRole.UserRole + 1  # the module's path
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
        self._children: dict[str, list[str]] = {}  # each module's children in the order shown
        self._rows: dict[str, int] = {}  # each module's row under its parent
        self._text: dict[tuple[int, int], str] = {}  # cells already worded

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
        self._children = {n.path: list(n.children) for n in laid.structure.nodes} if laid is not None else {}
        self._number_rows()
        self._text = {}
        self.endResetModel()

    def _number_rows(self) -> None:
        self._rows = {"": 0} if self._paths else {}
        for kids in self._children.values():
            self._rows.update((child, row) for row, child in enumerate(kids))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Each module's children by ``column``'s figure (rows without one last); -1: the call order again."""
        if self.laid is None:
            return
        self.layoutAboutToBeChanged.emit()
        kept = self.persistentIndexList()
        where = [(self.path_of(i), i.column()) for i in kept]
        if column < 0 or column >= len(self.columns):
            self._children = {n.path: list(n.children) for n in self.laid.structure.nodes}
        else:
            key = self._key(self.columns[column])
            descending = order == Qt.SortOrder.DescendingOrder
            for kids in self._children.values():
                kids.sort(key=lambda p: (key(p) is None, -(key(p) or 0) if descending else (key(p) or 0)))
        self._number_rows()
        self.changePersistentIndexList(
            kept, [self.index_of(p, c) if p is not None else QModelIndex() for p, c in where]
        )
        self.layoutChanged.emit()

    def _key(self, column: Any) -> Any:
        assert self.laid is not None
        layers = self.laid.layers
        if isinstance(column, _Side):
            return column.key
        return lambda p: column.key(layers[p])

    def matching(self, text: str) -> set[str] | None:
        """The paths a search for ``text`` keeps: those whose path or class holds it, and every module above them
        (None: no search, all of them)."""
        if self.laid is None or not text:
            return None
        wanted = text.lower()
        keep: set[str] = set()
        for node in self.laid.structure.nodes:
            if wanted in node.path.lower() or wanted in node.cls.lower():
                path: str | None = node.path
                while path is not None and path not in keep:
                    keep.add(path)
                    path = self.laid.structure.by_path[path].parent
        return keep

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
        return self.createIndex(self._rows[path], column, self._ids[path])

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008 - Qt's signature
        if self.laid is None or column >= len(self.columns):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, self._ids[""]) if row == 0 else QModelIndex()
        children = self._children[self._paths[parent.internalId()]]
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
        return len(self._children[self._paths[parent.internalId()]])

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
        if role not in _ROLES or not index.isValid() or self.laid is None:
            return None  # the roles a view asks of every cell and this model never sets: answered first
        path = self._paths[index.internalId()]
        if role == PATH_ROLE:
            return path
        column = self.columns[index.column()]
        layer = self.laid.layers[path]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole):
            text = self._cell(index.internalId(), index.column(), path)
            if role == Qt.ItemDataRole.DisplayRole:
                return text
            if text.startswith("FAIL"):
                return QBrush(QColor(theme.BAD))
            if isinstance(column, _Side) and column.heading == "what differs" and text:
                return QBrush(QColor(theme.WARN))
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column.numeric else None
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(FIRST_DIVERGENT) if layer.first_divergent else None
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 0:
            node = layer.node
            where = f"\n{node.where}" if node.where else ""
            firsts = ", ".join(r.replace("_", " ") for r in layer.first_divergent)
            return f"{path or '(the root)'} ({node.cls}){where}" + (f"\nfirst divergent {firsts}" if firsts else "")
        return None

    def _cell(self, row_id: int, column: int, path: str) -> str:
        key = (row_id, column)
        text = self._text.get(key)
        if text is None:
            assert self.laid is not None
            heading = self.columns[column]
            text = self._text[key] = (
                heading.cell(path) if isinstance(heading, _Side) else heading.cell(self.laid.layers[path])
            )
        return text


_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_ROLES = {
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.ForegroundRole,
    Qt.ItemDataRole.BackgroundRole,
    Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.ToolTipRole,
    PATH_ROLE,
}
