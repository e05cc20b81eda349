"""The Numerics view's table: a row per tap in execution order, its figures against both references."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from neffbench.gui.numerics import model
from neffbench.gui.widgets import theme
from neffbench.taps.compare import REFERENCES
from neffbench.taps.report import short_source

# What a reader scans for first (the verdict, times the tolerance) before what identifies the tap further.
COLUMNS = (
    "#", "Module", "Verdict", "×tol eager", "×tol float64", "max abs eager", "max abs float64",
    "cos eager", "cos float64", "dtype", "Shape", "Source",
)  # fmt: skip
MODULE_COLUMN, VERDICT_COLUMN, SOURCE_COLUMN = 1, 2, 11


def _figure(value: Any, digits: str = ".3g") -> str:
    number = model.number(value)
    return "—" if number is None else format(number, digits)


def _cells(figures: dict[str, Any] | None) -> list[str]:
    """Times the tolerance, max abs and cosine against one reference."""
    if not isinstance(figures, dict):
        return ["—", "—", "—"]
    if figures.get("problem"):
        return [figures["problem"], "—", "—"]
    cosine = model.number(figures.get("cosine"))
    return [_figure(figures.get("times_tolerance")), _figure(figures.get("max_abs")),
            "—" if cosine is None else f"{cosine:.6f}"]  # fmt: skip


def row_cells(index: int, tap: dict[str, Any]) -> tuple[list[str], bool | None]:
    eager, float64 = _cells(tap.get("vs_eager")), _cells(tap.get("vs_float64"))
    text, ok = verdict(tap)
    shape = "×".join(str(n) for n in tap.get("shape") or []) or "scalar"
    cells = [str(index), str(tap.get("module")), text]
    cells += [value for pair in zip(eager, float64) for value in pair]
    cells += [str(tap.get("dtype") or ""), shape, short_source(model.where(tap)) or "?"]
    return cells, ok


def verdict(tap: dict[str, Any]) -> tuple[str, bool | None]:
    """``ok``, ``FAIL vs float64``, ``FAIL`` (both), or ``not compared`` when neither was (nothing to compare it
    with: no failure)."""
    oks = {r: model.verdict_of(tap.get(r)) for r in REFERENCES}
    oks = {r: ok for r, ok in oks.items() if ok is not None}
    if not oks:
        return "not compared", None
    failed = [r for r, ok in oks.items() if not ok]
    if not failed:
        return "ok", True
    if len(failed) == len(REFERENCES):
        return "FAIL", False
    return f"FAIL {failed[0].replace('_', ' ')}", False


class TapTable(QTableWidget):
    """``tap_selected(index)`` when the user picks a row; ``select(index)`` from the chart."""

    tap_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("numerics-table")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.setMinimumSize(260, 120)
        self.itemSelectionChanged.connect(self._on_item_selection_changed)
        self._quiet = False

    def show_taps(self, document: dict[str, Any] | None) -> None:
        self._quiet = True
        self.clearContents()
        taps = (document or {}).get("taps") or []
        firsts = (
            {i for i in (model.first_index(document, r) for r in REFERENCES) if i is not None} if document else set()
        )
        self.setRowCount(len(taps))
        for row, tap in enumerate(taps):
            cells, ok = row_cells(row, tap)
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col == VERDICT_COLUMN and ok is not None:
                    item.setForeground(QColor(theme.GOOD if ok else theme.BAD))
                self.setItem(row, col, item)
            source_item, module_item = self.item(row, SOURCE_COLUMN), self.item(row, MODULE_COLUMN)
            assert source_item is not None and module_item is not None  # set just above
            source_item.setToolTip(str(model.where(tap) or ""))
            module_item.setToolTip(f"{tap.get('module')} ({tap.get('class')}, {tap.get('name')})")
            if row in firsts:
                font = module_item.font()
                font.setBold(True)
                module_item.setFont(font)
                module_item.setToolTip(module_item.toolTip() + " — first divergent")
        self.resizeColumnsToContents()
        # A deep module path must not push the figures out of sight: the tooltip has it whole.
        self.setColumnWidth(MODULE_COLUMN, min(self.columnWidth(MODULE_COLUMN), 180))
        self._quiet = False

    def select(self, index: int | None) -> None:
        self._quiet = True
        if index is None or not 0 <= index < self.rowCount():
            self.clearSelection()
        else:
            self.selectRow(index)
            first = self.item(index, 0)
            assert first is not None  # every row has its cells
            self.scrollToItem(first)
        self._quiet = False

    def selected_index(self) -> int | None:
        rows = {i.row() for i in self.selectedItems()}
        return min(rows) if rows else None

    def _on_item_selection_changed(self) -> None:
        index = self.selected_index()
        if not self._quiet and index is not None:
            self.tap_selected.emit(index)
