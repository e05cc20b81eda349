"""The CPU check report: tensors and their histograms, the NEFF interface, the traced operators and the problems."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QScrollArea, QSizePolicy, QSplitter,
                               QTableWidget, QTableWidgetItem, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from neffbench.gui import theme
from neffbench.kernels.api import bucket_label

TENSOR_COLUMNS = ("name", "dtype", "shape", "min", "max", "mean", "std", "NaN", "Inf")
GROUPS = (("inputs", "Inputs"), ("outputs", "Outputs"))
BAD_BACKGROUND = "#fde7e7"
DATA_DEPENDENT_WHY = ("{op}: its output's shape depends on the input values, and a NEFF has fixed shapes, "
                      "so this graph cannot be compiled. Use a fixed-size mask and torch.where instead.")
ROLE_TENSOR = Qt.ItemDataRole.UserRole
MAX_PROBLEMS_HEIGHT = 160


def _number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        return f"{value:.0f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def check_summary(report: dict[str, Any]) -> str:
    """``bucket num_tokens=128 · 79 ms (build 28 ms, trace 51 ms)``: which bucket, and how long each step took."""
    bucket = report.get("bucket")
    if not bucket:
        return "The check stopped before it reached a bucket."
    where = f"bucket {bucket_label(bucket) if isinstance(bucket, dict) else bucket}"
    timings = {k.removesuffix("_s"): float(v) for k, v in (report.get("timings") or {}).items()}
    if not timings:
        return where
    steps = ", ".join(f"{k} {_ms(v)}" for k, v in timings.items())
    return f"{where} · took {_ms(sum(timings.values()))} ({steps})"


class _FitScroll(QScrollArea):
    """As tall as its wrapped contents, up to MAX_PROBLEMS_HEIGHT; scrolls beyond."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().sizeHint()
        inner = self.widget()
        if inner is None:
            return hint
        height = inner.heightForWidth(max(100, self.viewport().width()))
        height = inner.sizeHint().height() if height < 0 else height
        return QSize(hint.width(), min(MAX_PROBLEMS_HEIGHT, height + 2 * self.frameWidth()))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()


class CheckView(QWidget):
    """Presents one probe ``check`` report; selecting a tensor shows its histogram."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.report: dict[str, Any] | None = None
        self.verdict_badge = QLabel("CPU check: not run")
        self.verdict_badge.setStyleSheet(theme.badge_style(None))
        self.check_label = QLabel("Run the CPU check to build the kernel, run it eagerly and trace it on the CPU: "
                                  "its tensors, NEFF interface and operators appear here.", wordWrap=True)
        self.banner = QLabel(wordWrap=True, visible=False)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setStyleSheet(f"QLabel {{ background: {BAD_BACKGROUND}; border: 1px solid {theme.BAD};"
                                  f" border-radius: 4px; padding: 6px; color: {theme.BAD}; font-weight: bold; }}")
        self.problem_labels: list[QLabel] = []
        self.problems_box = QWidget()
        self.problems_layout = QVBoxLayout(self.problems_box)
        self.problems_layout.setContentsMargins(4, 2, 4, 2)
        self.problems_layout.addStretch(1)
        self.problems_scroll = _FitScroll(widgetResizable=True, visible=False)
        self.problems_scroll.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.problems_scroll.setWidget(self.problems_box)
        self.tensor_tree = QTreeWidget()
        self.tensor_tree.setHeaderLabels(list(TENSOR_COLUMNS))
        self.tensor_tree.setRootIsDecorated(False)
        self.tensor_tree.setUniformRowHeights(True)
        self.tensor_tree.setAlternatingRowColors(True)
        header = self.tensor_tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setMinimumSectionSize(44)
        self.hist_widget = pg.PlotWidget()
        self.hist_plot: pg.PlotItem = self.hist_widget.getPlotItem()
        self.hist_plot.setMenuEnabled(False)
        self.hist_plot.showGrid(x=True, y=True, alpha=0.2)
        self.hist_plot.setLabel("bottom", "value")
        self.hist_plot.setLabel("left", "count")
        self.hist_plot.setTitle("Select a tensor to see its histogram", size="10pt")
        colour = QColor(theme.ROTATED)
        self.hist_curve = self.hist_plot.plot(stepMode="center", fillLevel=0, pen=pg.mkPen(colour, width=1.4),
                                              fillBrush=pg.mkBrush(colour.red(), colour.green(), colour.blue(), 60))
        self.interface_tree = QTreeWidget()
        self.interface_tree.setHeaderLabels(["NEFF interface"])
        self.ops_label = QLabel("Traced graph: not traced yet")
        self.ops_table = QTableWidget(0, 2)
        self.ops_table.setHorizontalHeaderLabels(["operator", "count"])
        self.ops_table.verticalHeader().setVisible(False)
        self.ops_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.ops_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ops_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.ops_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.ops_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self._layout()
        self.tensor_tree.currentItemChanged.connect(self._on_tensor_tree_current_item_changed)

    def _layout(self) -> None:
        header = QHBoxLayout()
        header.addWidget(self.verdict_badge)
        header.addWidget(self.check_label, 1)
        self.left_splitter = QSplitter(Qt.Orientation.Vertical)
        self.left_splitter.addWidget(self.tensor_tree)
        self.left_splitter.addWidget(self.hist_widget)
        self.left_splitter.setSizes([160, 240])
        ops = QWidget()
        ops_layout = QVBoxLayout(ops)
        ops_layout.setContentsMargins(0, 0, 0, 0)
        ops_layout.addWidget(self.ops_label)
        ops_layout.addWidget(self.ops_table, 1)
        self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        self.right_splitter.addWidget(self.interface_tree)
        self.right_splitter.addWidget(ops)
        self.right_splitter.setSizes([170, 230])
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.left_splitter)
        self.splitter.addWidget(self.right_splitter)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addWidget(self.banner)
        layout.addWidget(self.problems_scroll)
        layout.addWidget(self.splitter, 1)
        layout.addStretch(0)

    # ---- what the panel passes on ----

    def show_running(self, text: str) -> None:
        self.verdict_badge.setText("CPU check: running")
        self.verdict_badge.setStyleSheet(theme.badge_style(None))
        self.check_label.setText(text)

    def show_report(self, report: dict[str, Any]) -> None:
        self.report = report
        problems = list(report.get("problems") or [])
        errors = [p for p in problems if p.get("severity") == "error"]
        if report.get("error"):  # the probe itself failed: nothing else in the report
            errors.insert(0, {"severity": "error", "message": report["error"]})
        warnings = [p for p in problems if p.get("severity") != "error"]
        ok = bool(report.get("ok")) and not errors
        counted = ", ".join(f"{n} {word}{'s' if n != 1 else ''}"
                            for n, word in ((len(errors), "error"), (len(warnings), "warning")) if n)
        self.verdict_badge.setText(f"CPU check {'passed' if ok else 'failed'}" + (f": {counted}" if counted else ""))
        self.verdict_badge.setStyleSheet(theme.badge_style(ok))
        self.check_label.setText(check_summary(report))
        self.check_label.setToolTip("\n".join(f"{k}: {v}" for k, v in (report.get("info") or {}).items()))
        self._show_banner(report, ok, errors)
        self._show_problems(errors + warnings if not report.get("error") else warnings)
        self._fill_tensors(report)
        self._fill_interface(report)
        self._fill_ops(report)
        # With nothing built there is nothing to tabulate: the banner and the problems are the whole report.
        self.splitter.setVisible(bool(report.get("inputs") or report.get("outputs") or report.get("interface")))

    def _show_banner(self, report: dict[str, Any], ok: bool, errors: list[dict[str, Any]]) -> None:
        if ok:
            self.banner.hide()
            return
        if report.get("error"):
            text = f"The CPU check could not run: {report['error']}"
        else:
            n = len(errors)
            text = f"This spec will not compile as it is: the CPU check found {n} error{'s' if n != 1 else ''}."
        self.banner.setText(text)
        self.banner.show()

    def _show_problems(self, problems: list[dict[str, Any]]) -> None:
        for label in self.problem_labels:
            self.problems_layout.removeWidget(label)
            label.deleteLater()
        self.problem_labels = []
        for problem in problems:
            severity = str(problem.get("severity", "warning"))
            colour = theme.PROBLEM_COLOURS.get(severity, theme.WARN)
            label = QLabel(f"<span style='color:{colour}'><b>{html.escape(severity.capitalize())}:</b> "
                           f"{html.escape(str(problem.get('message', '')), quote=False)}</span>", wordWrap=True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setProperty("severity", severity)
            self.problems_layout.insertWidget(len(self.problem_labels), label)
            self.problem_labels.append(label)
        self.problems_scroll.setVisible(bool(problems))
        self.problems_scroll.updateGeometry()

    def _fill_tensors(self, report: dict[str, Any]) -> None:
        tree = self.tensor_tree
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
            _number(s.get(k)) for k in ("min", "max", "mean", "std", "nan", "inf")]
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
                item.setToolTip(col, f"{count} of {numel} values are {TENSOR_COLUMNS[col]}: the statistics and "
                                     "the histogram leave them out.")
        return item

    def _fill_interface(self, report: dict[str, Any]) -> None:
        tree = self.interface_tree
        tree.clear()
        interface = report.get("interface") or {}
        bold = QFont()
        bold.setBold(True)

        def group(title: str, lines: list[str], colour: str | None = None, tip: str = "") -> None:
            top = QTreeWidgetItem(tree, [title])
            top.setFont(0, bold)
            for line in lines:
                child = QTreeWidgetItem(top, [line])
                if colour:
                    child.setForeground(0, QBrush(QColor(colour)))
                if tip:
                    child.setToolTip(0, tip)
            top.setExpanded(True)

        if not interface:
            QTreeWidgetItem(tree, ["Not traced"])
            return
        group("NEFF inputs", list(interface.get("inputs") or []))
        group("NEFF outputs", list(interface.get("outputs") or []))
        if report.get("unused_inputs"):
            group("Dropped (unused) inputs", [f"{n}: not an input of the NEFF" for n in report["unused_inputs"]],
                  theme.WARN, "The traced graph never uses it, so torch_neuronx drops it from the NEFF interface.")
        if report.get("constant_outputs"):
            group("Constant outputs", [f"{n}: baked into the NEFF" for n in report["constant_outputs"]],
                  theme.WARN, "It depends on no input.")

    def _fill_ops(self, report: dict[str, Any]) -> None:
        table = self.ops_table
        counts = dict(report.get("op_counts") or {})
        flagged = {label.split(" ")[0]: label for label in report.get("data_dependent") or []}
        rows = sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0]))
        table.setRowCount(len(rows))
        for row, (op, count) in enumerate(rows):
            name, number = QTableWidgetItem(op), QTableWidgetItem()
            number.setData(Qt.ItemDataRole.DisplayRole, int(count))
            number.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if op in flagged:
                tip = DATA_DEPENDENT_WHY.format(op=flagged[op])
                for cell in (name, number):
                    cell.setForeground(QBrush(QColor(theme.BAD)))
                    cell.setBackground(QBrush(QColor(BAD_BACKGROUND)))
                    cell.setToolTip(tip)
            table.setItem(row, 0, name)
            table.setItem(row, 1, number)
        total = sum(int(c) for c in counts.values())
        if "interface" not in report:
            self.ops_label.setText("Traced graph: not traced")
        else:
            dd = f" · {len(flagged)} data-dependent" if flagged else ""
            self.ops_label.setText(f"Traced graph: {total} operator call{'s' if total != 1 else ''}, "
                                   f"{len(rows)} kind{'s' if len(rows) != 1 else ''}{dd}")
            self.ops_label.setStyleSheet(f"color: {theme.BAD};" if flagged else "")

    # ---- the histogram of the selected tensor ----

    def tensor(self, item: QTreeWidgetItem | None) -> dict[str, Any] | None:
        where = item.data(0, ROLE_TENSOR) if item is not None else None
        if not where or self.report is None:
            return None
        key, index = where
        return (self.report.get(key) or [])[index]

    def select_tensor(self, key: str, name: str) -> None:
        """Make the tensor ``name`` of ``inputs`` or ``outputs`` current (as a click on its row does)."""
        group = self.tensor_tree.topLevelItem([k for k, _ in GROUPS].index(key))
        for i in range(group.childCount()):
            if group.child(i).text(0) == name:
                self.tensor_tree.setCurrentItem(group.child(i))
                return
        raise KeyError(f"no {key[:-1]} named {name!r} in the report")

    def _show_histogram(self, tensor: dict[str, Any] | None) -> None:
        hist = (tensor or {}).get("histogram") or {}
        edges, counts = hist.get("edges") or [], hist.get("counts") or []
        if tensor is None or len(edges) != len(counts) + 1 or not counts:
            self.hist_curve.setData([], [])
            self.hist_plot.setTitle("Select a tensor to see its histogram" if tensor is None
                                    else f"{tensor.get('name')}: no histogram", size="10pt")
            return
        self.hist_curve.setData(np.asarray(edges, dtype=np.float64), np.asarray(counts, dtype=np.float64))
        s = tensor.get("stats") or {}
        binned, numel = int(sum(counts)), int(s.get("numel") or 0)
        left_out = int(s.get("nan") or 0) + int(s.get("inf") or 0)
        extra = f", {left_out} NaN/Inf not binned" if left_out else ""
        if numel and binned + left_out < numel:
            extra += f", a strided sample of {binned + left_out}"
        shape = "x".join(str(d) for d in tensor.get("shape") or []) or "scalar"
        self.hist_plot.setTitle(f"{tensor.get('name')}: {tensor.get('dtype')} [{shape}], {numel} values{extra}",
                                size="10pt")
        self.hist_plot.enableAutoRange()

    def _on_tensor_tree_current_item_changed(self, current: QTreeWidgetItem | None, _previous) -> None:
        tensor = self.tensor(current)
        if tensor is not None:
            self._show_histogram(tensor)
