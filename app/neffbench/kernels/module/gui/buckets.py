"""The module form's bucket axes and, below them, every input's shape in every bucket combination."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.forms.problem_lines import problem_label, show_problems
from neffbench.kernels.module import tensors
from neffbench.kernels.module.build import all_buckets
from neffbench.kernels.module.gui.parts import FitTable, tab_before
from neffbench.kernels.module.params import ModuleCompileSpec
from neffbench.kernels.module.rules import unknown_axes
from neffbench.spec import Problem

MAX_LISTED = 64  # combinations written out; validation caps the total at 256
MAX_LINES_SHOWN = 8


class AxisRow(QObject):
    edited = Signal()
    removed = Signal(object)

    def __init__(self, table: FitTable, axis: str, values: tuple[int, ...] | None):
        super().__init__()
        row = table.rowCount()
        table.insertRow(row)
        self.name_edit = QLineEdit(axis)
        self.name_edit.setPlaceholderText("axis, such as seq")
        self.name_edit.setFrame(False)
        self.values_edit = QLineEdit(", ".join(str(v) for v in values or ()))
        self.values_edit.setPlaceholderText("values, such as 1, 8, 32")
        self.values_edit.setFrame(False)
        self.values_edit.setToolTip("One NEFF per value (and per combination with the other axes)")
        self.remove = QToolButton(text="✕")  # type: ignore[call-arg]  # a Qt property keyword
        self.remove.setAutoRaise(True)
        self.remove.setToolTip("Remove this axis")
        for column, widget in enumerate((self.name_edit, self.values_edit, self.remove)):
            table.setCellWidget(row, column, widget)
        self._last = tuple(values or ())
        self.parse_error: str | None = None
        self._rename()
        self.name_edit.textEdited.connect(self._on_name_edit_text_edited)
        self.values_edit.textEdited.connect(self.edited)
        self.remove.clicked.connect(self._on_remove_clicked)

    @property
    def axis(self) -> str:
        return self.name_edit.text().strip()

    def values(self) -> tuple[int, ...]:
        """The values typed; while the text is not whole numbers, the last ones that were."""
        tokens = self.values_edit.text().replace(",", " ").split()
        bad = next((t for t in tokens if not t.lstrip("+-").isdigit()), None)
        if bad is not None:
            self.parse_error = (
                f"'{bad}' is not a whole number; list the values of {self.axis or 'the axis'} like 1, 8, 32."
            )
            return self._last
        self.parse_error = None
        self._last = tuple(int(t) for t in tokens)
        return self._last

    def _rename(self) -> None:
        self.name_edit.setObjectName(f"buckets.{self.axis}.name")
        self.values_edit.setObjectName(f"buckets.{self.axis}")
        self.remove.setObjectName(f"buckets.{self.axis}.remove")

    def _on_name_edit_text_edited(self) -> None:
        self._rename()
        self.edited.emit()

    def _on_remove_clicked(self) -> None:
        self.removed.emit(self)


class BucketsEditor(QWidget):
    """``buckets``: axis name and values per row, then the resolved input shapes of every combination."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rows: list[AxisRow] = []
        self._wanted: list[str] = []  # axes the inputs use that no row names yet: what Add axis offers
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = FitTable(0, 3)
        self.table.setObjectName("buckets-table")
        self.table.setHorizontalHeaderLabels(["Axis", "Values", ""])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 140)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.table)
        self.problem = problem_label("buckets")
        layout.addWidget(self.problem)
        bottom = QHBoxLayout()
        self.add_button = QPushButton("Add axis")
        self.add_button.setObjectName("add-axis-button")
        self.add_button.setToolTip("A {axis} the input shapes use; one NEFF per value")
        bottom.addWidget(self.add_button)
        bottom.addStretch(1)
        layout.addLayout(bottom)
        title = QLabel("Shapes per bucket")
        title.setObjectName("shapes-title")
        layout.addWidget(title)
        self.shapes = QPlainTextEdit()
        self.shapes.setObjectName("shapes")
        self.shapes.setReadOnly(True)
        self.shapes.setToolTip("What each compile gets: every tensor input with its dims filled in")
        layout.addWidget(self.shapes)
        self.add_button.clicked.connect(self._on_add_button_clicked)

    def set_value(self, buckets: dict[str, tuple[int, ...]]) -> None:
        self.table.setRowCount(0)
        for row in self.rows:
            row.deleteLater()
        self.rows = []
        for axis, values in buckets.items():
            self._add(axis, values)
        self.table.updateGeometry()
        self._order_tabs()

    def _add(self, axis: str, values: tuple[int, ...] | None) -> AxisRow:
        row = AxisRow(self.table, axis, values)
        row.edited.connect(self.edited)
        row.removed.connect(self._on_row_removed)
        self.rows.append(row)
        return row

    def _order_tabs(self) -> None:
        tab_before(self.add_button, [w for row in self.rows for w in (row.name_edit, row.values_edit, row.remove)])

    def value(self) -> dict[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        for row in self.rows:
            values = row.values()
            if row.axis:
                out.setdefault(row.axis, values)
        return out

    def problems(self) -> list[Problem]:
        out: list[Problem] = []
        seen: set[str] = set()
        for row in self.rows:
            row.values()
            if row.parse_error:
                out.append(Problem(f"buckets.{row.axis}" if row.axis else "buckets", row.parse_error))
            if not row.axis and row.values_edit.text().strip():
                out.append(Problem("buckets", "A bucket row has values but no axis name."))
            elif row.axis and row.axis in seen:
                out.append(Problem(f"buckets.{row.axis}", f"Axis '{row.axis}' has two rows; the first one counts."))
            seen.add(row.axis)
        return out

    def show_problems(self, by_field: dict[str, list[Problem]]) -> None:
        mine = [key for key in by_field if key == "buckets" or key.startswith("buckets.")]
        show_problems(self.problem, [p for key in mine for p in by_field.pop(key)])

    def show_shapes(self, spec: ModuleCompileSpec) -> None:
        """One line per bucket combination with each input's resolved shape (or why it has none)."""
        self._wanted = unknown_axes(spec)
        self.shapes.setPlainText("\n".join(shape_lines(spec)))
        lines = min(max(self.shapes.document().blockCount(), 1), MAX_LINES_SHOWN)
        margins = self.shapes.contentsMargins()
        height = lines * self.shapes.fontMetrics().lineSpacing() + 2 * self.shapes.document().documentMargin()
        self.shapes.setFixedHeight(int(height) + margins.top() + margins.bottom() + 2)

    def _on_add_button_clicked(self) -> None:
        # The axis the inputs' error names, when there is one: the user then types only its values.
        named = {row.axis for row in self.rows}
        offered = next((axis for axis in self._wanted if axis not in named), "")
        row = self._add(offered, None)
        self.table.updateGeometry()
        self._order_tabs()
        if offered:
            row.values_edit.setFocus()
            self.edited.emit()
        else:
            row.name_edit.setFocus()

    def _on_row_removed(self, row: AxisRow) -> None:
        self.table.removeRow(self.rows.index(row))
        self.rows.remove(row)
        row.deleteLater()
        self.table.updateGeometry()
        self.edited.emit()


def shape_lines(spec: ModuleCompileSpec) -> list[str]:
    parsed: dict[str, tensors.TensorSpec] = {}
    lines: list[str] = []
    for name, text in spec.inputs.items():
        try:
            parsed[name] = tensors.parse(text)
        except tensors.TensorSpecError as exc:
            lines.append(f"✖ {name}: {exc}")
    if not spec.inputs:
        return lines + ["No tensor inputs yet."]
    combos = all_buckets(spec)
    if not combos:
        empty = ", ".join(axis for axis, values in spec.buckets.items() if not values)
        return lines + [f"No bucket combinations: {empty} list{'s' if ',' not in empty else ''} no values."]
    for bucket in combos[:MAX_LISTED]:
        where = ", ".join(f"{axis}={size}" for axis, size in bucket.items()) or "one bucket"
        shown = []
        for name, spec_ in parsed.items():
            try:
                shown.append(tensors.describe(name, spec_, bucket))
            except tensors.TensorSpecError as exc:
                shown.append(f"{name}: ✖ {exc}")
        lines.append(f"{where}  →  " + "   ".join(shown) if shown else where)
    if len(combos) > MAX_LISTED:
        lines.append(f"… and {len(combos) - MAX_LISTED} more combinations")
    return lines
