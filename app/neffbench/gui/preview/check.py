"""The CPU check report: the verdict, the problems, the tensors, the NEFF interface and the traced operators."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.preview.tensors import BAD_BACKGROUND, FitTree, TensorView
from neffbench.gui.widgets import theme
from neffbench.kernels.bucket_words import bucket_label

DATA_DEPENDENT_WHY = (
    "{op}: its output's shape depends on the input values, and a NEFF has fixed shapes, "
    "so this graph cannot be compiled. Use a fixed-size mask and torch.where instead."
)
MAX_PROBLEMS_HEIGHT = 160


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def check_summary(report: dict[str, Any]) -> str:
    """``bucket num_tokens=128 · 79 ms (build 28 ms, trace 51 ms)``: which bucket, and how long each step took."""
    bucket = report.get("bucket")
    if bucket is None:
        return "The check stopped before it reached a bucket."
    if bucket == {}:
        where = "the one bucket (the spec has no bucket axes)"
    else:
        where = f"bucket {bucket_label(bucket) if isinstance(bucket, dict) else bucket}"
    timings = {k.removesuffix("_s"): float(v) for k, v in (report.get("timings") or {}).items()}
    if not timings:
        return where
    steps = ", ".join(f"{k} {_ms(v)}" for k, v in timings.items())
    return f"{where} · took {_ms(sum(timings.values()))} ({steps})"


def verdict(report: dict[str, Any]) -> tuple[bool, list[dict[str, Any]], list[dict[str, Any]]]:
    """(passed, errors, warnings) of a report; a probe that could not run counts its ``error`` as the first one."""
    problems = list(report.get("problems") or [])
    errors = [p for p in problems if p.get("severity") == "error"]
    if report.get("error"):  # the probe itself failed: nothing else in the report
        errors.insert(0, {"severity": "error", "message": report["error"]})
    warnings = [p for p in problems if p.get("severity") != "error"]
    return bool(report.get("ok")) and not errors, errors, warnings


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

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # QScrollArea's own minimum (room for its scroll bars) is taller than one problem.
        return QSize(100, min(self.sizeHint().height(), 3 * self.fontMetrics().height()))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()


class CheckView(QWidget):
    """Presents one probe ``check`` report. ``keep_state_requested`` carries the names of the buffers the forward
    writes, when the user asks to keep them as the module's state."""

    keep_state_requested = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._state_found: list[str] = []
        self.keep_state_button = QPushButton("Keep as &state", visible=False)
        self.keep_state_button.clicked.connect(self._on_keep_state_button_clicked)
        self.verdict_badge = QLabel("CPU check: not run")
        self.verdict_badge.setStyleSheet(theme.badge_style(None))
        self.check_label = QLabel(
            "Run the CPU check to build the kernel, run it eagerly and trace it on the CPU: "
            "its tensors, NEFF interface and operators appear here.",
            wordWrap=True,
        )
        self.banner = QLabel(wordWrap=True, visible=False)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setStyleSheet(
            f"QLabel {{ background: {BAD_BACKGROUND}; border: 1px solid {theme.BAD};"
            f" border-radius: 4px; padding: 6px; color: {theme.BAD}; font-weight: bold; }}"
        )
        self.problem_labels: list[QLabel] = []
        self.problems_box = QWidget()
        self.problems_layout = QVBoxLayout(self.problems_box)
        self.problems_layout.setContentsMargins(4, 2, 4, 2)
        self.problems_layout.addStretch(1)
        self.problems_scroll = _FitScroll(widgetResizable=True, visible=False)  # type: ignore[call-arg]  # a Qt property keyword
        self.problems_scroll.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.problems_scroll.setWidget(self.problems_box)
        self.tensors = TensorView()
        self.tensor_tree, self.hist_plot, self.hist_curve = self.tensors.tree, self.tensors.plot, self.tensors.curve
        self.interface_tree = FitTree()
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

    def _layout(self) -> None:
        header = QHBoxLayout()
        header.addWidget(self.verdict_badge)
        header.addWidget(self.check_label, 1)
        ops = QWidget()
        ops_layout = QVBoxLayout(ops)
        ops_layout.setContentsMargins(0, 0, 0, 0)
        ops_layout.addWidget(self.ops_label)
        ops_layout.addWidget(self.ops_table, 1)
        self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        self.right_splitter.addWidget(self.interface_tree)
        self.right_splitter.addWidget(ops)
        self.right_splitter.setStretchFactor(1, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.tensors)
        self.splitter.addWidget(self.right_splitter)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addWidget(self.banner)
        layout.addWidget(self.keep_state_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.problems_scroll)
        layout.addWidget(self.splitter, 1)
        layout.addStretch(0)

    # ---- what the panel passes on ----

    def show_running(self, text: str) -> None:
        self.verdict_badge.setText("CPU check: running")
        self.verdict_badge.setStyleSheet(theme.badge_style(None))
        self.check_label.setText(text)

    def show_report(self, report: dict[str, Any]) -> None:
        ok, errors, warnings = verdict(report)
        counted = ", ".join(
            f"{n} {word}{'s' if n != 1 else ''}"
            for n, word in ((len(errors), "error"), (len(warnings), "warning"))
            if n
        )
        self.verdict_badge.setText(f"CPU check {'passed' if ok else 'failed'}" + (f": {counted}" if counted else ""))
        self.verdict_badge.setStyleSheet(theme.badge_style(ok))
        self.check_label.setText(check_summary(report))
        self.check_label.setToolTip("\n".join(f"{k}: {v}" for k, v in (report.get("info") or {}).items()))
        self._show_banner(report, ok, errors)
        self._state_found = [str(n) for n in report.get("state_found") or []]
        self.keep_state_button.setVisible(bool(self._state_found))
        self.keep_state_button.setToolTip(
            "Keep what the forward writes as the module's state, passed in and returned by the compiled graph and "
            "kept on the device from call to call: " + ", ".join(self._state_found)
        )
        self._show_problems(errors + warnings if not report.get("error") else warnings)
        self.tensors.show_report(report)
        self._fill_interface(report)
        self._fill_ops(report)
        # With nothing built there is nothing to tabulate: the banner and the problems are the whole report.
        self.splitter.setVisible(bool(report.get("inputs") or report.get("outputs") or report.get("interface")))

    def select_tensor(self, key: str, name: str) -> None:
        self.tensors.select_tensor(key, name)

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
            label = QLabel(
                f"<span style='color:{colour}'><b>{html.escape(severity.capitalize())}:</b> "
                f"{html.escape(str(problem.get('message', '')), quote=False)}</span>",
                wordWrap=True,
            )
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setProperty("severity", severity)
            self.problems_layout.insertWidget(len(self.problem_labels), label)
            self.problem_labels.append(label)
        self.problems_scroll.setVisible(bool(problems))
        self.problems_scroll.updateGeometry()

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
            group(
                "Dropped (unused) inputs",
                [f"{n}: not an input of the NEFF" for n in report["unused_inputs"]],
                theme.WARN,
                "The traced graph never uses it, so torch_neuronx drops it from the NEFF interface.",
            )
        if report.get("constant_outputs"):
            group(
                "Constant outputs",
                [f"{n}: baked into the NEFF" for n in report["constant_outputs"]],
                theme.WARN,
                "It depends on no input.",
            )

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
            self.ops_label.setText(
                f"Traced graph: {total} operator call{'s' if total != 1 else ''}, "
                f"{len(rows)} kind{'s' if len(rows) != 1 else ''}{dd}"
            )
            self.ops_label.setStyleSheet(f"color: {theme.BAD};" if flagged else "")

    def _on_keep_state_button_clicked(self) -> None:
        self.keep_state_requested.emit(list(self._state_found))
