"""The tensors a CPU check reports: a row of statistics each, and the histogram of the selected one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QSplitter, QTreeWidget, QTreeWidgetItem, QWidget

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.plot_boxes import plot_widget
from neffbench.gui.widgets.plot_titles import set_title
from neffbench.gui.widgets.readable import integer_axes, keep_readable

TENSOR_COLUMNS = ("name", "dtype", "shape", "min", "max", "mean", "std", "NaN", "Inf")
GROUPS = (("inputs", "Inputs"), ("outputs", "Outputs"))
BAD_BACKGROUND = "#fde7e7"
ROLE_TENSOR = Qt.ItemDataRole.UserRole


def _number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        return f"{value:.0f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class FitTree(QTreeWidget):
    """Asks for the height of its rows (3 to 14 of them), so that its splitter gives the rest to the pane below."""

    def _height(self, most: int) -> int:
        rows, item = 0, self.topLevelItem(0)
        while item is not None:
            rows += 1
            item = self.itemBelow(item)
        row = self.sizeHintForRow(0) if rows else self.fontMetrics().height() + 4
        height = self.header().sizeHint().height() + min(max(rows, 3), most) * row + 2 * self.frameWidth() + 4
        if self.header().length() > self.viewport().width():  # room for the horizontal scroll bar too
            height += self.horizontalScrollBar().sizeHint().height()
        return height

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(super().sizeHint().width(), self._height(14))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # A short report is seen whole; a long one keeps five rows however far the splitter is pulled.
        return QSize(super().minimumSizeHint().width(), self._height(5))


class TensorView(QSplitter):
    """Inputs and outputs in a tree (NaN/Inf counts above 0 highlighted); the current row's histogram below."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Vertical, parent)
        self.report: dict[str, Any] | None = None
        self.tree = FitTree()
        self.tree.setHeaderLabels(list(TENSOR_COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setMinimumSectionSize(44)
        self.plot_widget = plot_widget(axisItems=integer_axes("left"))  # a count
        keep_readable(self.plot_widget)
        self.plot: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setLabel("bottom", "value")
        self.plot.setLabel("left", "count")
        set_title(self.plot, "Select a tensor to see its histogram", size="10pt")
        colour = QColor(theme.ROTATED)
        self.curve = self.plot.plot(
            stepMode="center",
            fillLevel=0,
            pen=pg.mkPen(colour, width=1.4),
            fillBrush=pg.mkBrush(colour.red(), colour.green(), colour.blue(), 60),
        )
        self.addWidget(self.tree)
        self.addWidget(self.plot_widget)
        self.setStretchFactor(1, 1)
        self.tree.currentItemChanged.connect(self._on_tree_current_item_changed)

    def show_report(self, report: dict[str, Any]) -> None:
        self.report = report
        tree = self.tree
        tree.blockSignals(True)
        tree.clear()
        dropped = set(report.get("unused_inputs") or [])
        constant = set(report.get("constant_outputs") or [])
        bold = QFont()
        bold.setBold(True)
        first = None
        for key, title in GROUPS:
            tensors = report.get(key) or []
            group = QTreeWidgetItem(tree, [f"{title} ({len(tensors)})"])
            group.setFirstColumnSpanned(True)
            group.setFont(0, bold)
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            for index, tensor in enumerate(tensors):
                item = self._tensor_item(group, tensor, key, dropped, constant)
                item.setData(0, ROLE_TENSOR, (key, index))
                if first is None:
                    first = item
            group.setExpanded(True)
        tree.blockSignals(False)
        if first is not None:
            tree.setCurrentItem(first)
        else:
            self._show_histogram(None)

    @staticmethod
    def _tensor_item(group: QTreeWidgetItem, tensor: dict[str, Any], key: str, dropped: set, constant: set):
        s = tensor.get("stats") or {}
        shape = "[" + ", ".join(str(d) for d in tensor.get("shape") or []) + "]"
        values = [tensor.get("name", "?"), tensor.get("dtype", "?"), shape] + [
            _number(s.get(k)) for k in ("min", "max", "mean", "std", "nan", "inf")
        ]
        item = QTreeWidgetItem(group, [str(v) for v in values])
        for col in range(3, len(TENSOR_COLUMNS)):
            item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        name = tensor.get("name")
        if key == "inputs" and name in dropped:
            item.setForeground(0, QBrush(QColor(theme.WARN)))
            item.setToolTip(0, f"{name} is never used by the traced graph: the NEFF will not take it.")
        elif key == "outputs" and name in constant:
            item.setForeground(0, QBrush(QColor(theme.WARN)))
            item.setToolTip(0, f"{name} depends on no input: it is a constant baked into the NEFF.")
        numel = s.get("numel")
        for col, stat in ((7, "nan"), (8, "inf")):
            count = s.get(stat) or 0
            if count > 0:
                item.setForeground(col, QBrush(QColor(theme.BAD)))
                item.setBackground(col, QBrush(QColor(BAD_BACKGROUND)))
                font = item.font(col)
                font.setBold(True)
                item.setFont(col, font)
                item.setToolTip(
                    col,
                    f"{count} of {numel} values are {TENSOR_COLUMNS[col]}: the statistics and "
                    "the histogram leave them out.",
                )
        return item

    def tensor(self, item: QTreeWidgetItem | None) -> dict[str, Any] | None:
        where = item.data(0, ROLE_TENSOR) if item is not None else None
        if not where or self.report is None:
            return None
        key, index = where
        return (self.report.get(key) or [])[index]

    def select_tensor(self, key: str, name: str) -> None:
        """Make the tensor ``name`` of ``inputs`` or ``outputs`` current (as a click on its row does)."""
        group = self.tree.topLevelItem([k for k, _ in GROUPS].index(key))
        assert group is not None  # one item per group
        for i in range(group.childCount()):
            child = group.child(i)
            if child is not None and child.text(0) == name:
                self.tree.setCurrentItem(child)
                return
        raise KeyError(f"no {key[:-1]} named {name!r} in the report")

    def _show_histogram(self, tensor: dict[str, Any] | None) -> None:
        hist = (tensor or {}).get("histogram") or {}
        edges, counts = hist.get("edges") or [], hist.get("counts") or []
        if tensor is None or len(edges) != len(counts) + 1 or not counts:
            self.curve.setData([], [])
            set_title(
                self.plot,
                "Select a tensor to see its histogram" if tensor is None else f"{tensor.get('name')}: no histogram",
                size="10pt",
            )
            return
        self.curve.setData(np.asarray(edges, dtype=np.float64), np.asarray(counts, dtype=np.float64))
        s = tensor.get("stats") or {}
        binned, numel = int(sum(counts)), int(s.get("numel") or 0)
        left_out = int(s.get("nan") or 0) + int(s.get("inf") or 0)
        extra = f", {left_out} NaN/Inf not binned" if left_out else ""
        if numel and binned + left_out < numel:
            extra += f", a strided sample of {binned + left_out}"
        shape = "x".join(str(d) for d in tensor.get("shape") or []) or "scalar"
        set_title(
            self.plot, f"{tensor.get('name')}: {tensor.get('dtype')} [{shape}], {numel} values{extra}", size="10pt"
        )
        self.plot.enableAutoRange()

    def _on_tree_current_item_changed(self, current: QTreeWidgetItem | None, _previous) -> None:
        tensor = self.tensor(current)
        if tensor is not None:
            self._show_histogram(tensor)
