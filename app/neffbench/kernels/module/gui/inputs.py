"""The module form's inputs table: each forward parameter as a tensor input, a constant, or left at its default."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.forms.problem_lines import problem_label, show_problems
from neffbench.gui.widgets import theme, wheel
from neffbench.kernels.module.gui.parts import (
    DTYPES,
    TOML_EXAMPLES,
    FitTable,
    TomlEditor,
    cell,
    compose_tensor,
    meta_field,
    note_label,
    split_tensor,
    tab_before,
)
from neffbench.kernels.module.gui.report import signature_text
from neffbench.kernels.module.tensors import FLOAT_DTYPES
from neffbench.spec import Problem

COLUMNS = ("Parameter", "Use", "Dtype", "Shape", "Init", "Value")
NAME, USE, DTYPE, SHAPE, INIT, VALUE = range(len(COLUMNS))
MIN_COLUMN = 80  # shape, init and value stay readable; a narrow form scrolls the table sideways
_SCALARS = ("int", "float", "bool", "str", "choices")


def _default_use(p: dict[str, Any], first_tensor: bool, spec_has_inputs: bool) -> str:
    """Tensors are inputs; scalars without a default are constants; the rest keep their defaults.

    Of optional tensors (``input_ids=None, inputs_embeds=None, ...``) only the first becomes an input,
    and none when the spec already names its inputs: two of them often exclude each other."""
    widget, has_default = p.get("widget"), p.get("has_default")
    if widget in _SCALARS:
        return "default" if has_default else "constant"
    if not has_default:
        return "tensor"  # an unannotated forward(x) takes a tensor
    return "tensor" if widget == "tensor" and first_tensor and not spec_has_inputs else "default"


def _guess_dtype(name: str) -> str:
    return "int64" if name.endswith("ids") or "mask" in name else "float32"


class InputRow(QObject):
    """One row: the parameter, how it is given, and its tensor spec or constant value."""

    edited = Signal()
    removed = Signal(object)

    def __init__(self, table: QTableWidget, p: dict[str, Any] | None, name: str, use: str, given: Any, clean: bool):
        super().__init__()
        self.param = p
        self.remove: QToolButton | None = None
        row = table.rowCount()
        table.insertRow(row)
        self.table = table
        if p is not None:
            self.name_item: QTableWidgetItem | None = QTableWidgetItem(name)
            self.name_item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.name_item.setToolTip(signature_text(p))
            table.setItem(row, NAME, self.name_item)
            self.name_edit = None
        else:
            self.name_item = None
            self.name_edit = QLineEdit(name)
            self.name_edit.setPlaceholderText("parameter")
            self.name_edit.setFrame(False)
            self.remove = QToolButton(text="✕")  # type: ignore[call-arg]  # a Qt property keyword
            self.remove.setToolTip("Remove this input")
            self.remove.setAutoRaise(True)
            table.setCellWidget(row, NAME, cell(self.name_edit, self.remove))
        self.use = QComboBox()
        self.use.addItems(["tensor", "constant"] + (["default"] if p and p.get("has_default") else []))
        self.use.setToolTip(
            "tensor: an input of the NEFF (a tensor spec); constant: a value bound by name and "
            "traced into the graph; default: the parameter keeps its default"
        )
        self.dtype = QComboBox()
        self.dtype.addItems(DTYPES)
        wheel.guard(self.use)
        wheel.guard(self.dtype)
        self.shape = QLineEdit()
        self.shape.setPlaceholderText("{batch},{seq} or 1,128")
        self.shape.setToolTip("Dims separated by commas: whole numbers or {axis} of the buckets")
        self.init = QLineEdit()
        self.init.setToolTip(
            'randn, rand(lo, hi), randint(lo, hi), ones, zeros, full(v), arange, file("x.npy"); '
            "empty: the dtype's default"
        )
        lenient = p is not None and p.get("widget") in ("str", "choices")
        self.value_editor = TomlEditor(
            meta_field(name or "value", f"The constant as a TOML value: {TOML_EXAMPLES}."), lenient=lenient
        )
        self.value_editor.widget.setPlaceholderText("TOML value")
        for column, widget in (
            (USE, self.use),
            (DTYPE, self.dtype),
            (SHAPE, self.shape),
            (INIT, self.init),
            (VALUE, self.value_editor.widget),
        ):
            table.setCellWidget(row, column, cell(widget))
        self._original = None
        self._fill(use, given)
        self._clean = clean
        if clean:
            self._original = ("input", given) if use == "tensor" else ("constant", given) if use == "constant" else None
        self._rename()
        self._wire()

    @property
    def name(self) -> str:
        if self.name_item is not None:
            return self.name_item.text()
        assert self.name_edit is not None  # a row of no parameter is named in a line edit
        return self.name_edit.text().strip()

    def editors(self) -> list[QWidget]:
        """The row's editors in column order (what Tab goes through)."""
        named = [self.name_edit, self.remove] if self.name_edit is not None and self.remove is not None else []
        return [*named, self.use, self.dtype, self.shape, self.init, self.value_editor.widget]

    def _fill(self, use: str, given: Any) -> None:
        self.use.setCurrentText(use)
        if use == "tensor" and isinstance(given, str):
            dtype, shape, init = split_tensor(given)
            if dtype and self.dtype.findText(dtype) < 0:
                self.dtype.addItem(dtype)  # shown as written; validation says what is wrong with it
            self.dtype.setCurrentText(dtype or "float32")
            self.shape.setText(shape)
            self.init.setText(init)
        else:
            self.dtype.setCurrentText(_guess_dtype(self.name))
        if use == "constant":
            self.value_editor.set_value(given)
        self._enable()

    def _enable(self) -> None:
        """Only the cells that mean something for the row's use are shown."""
        use = self.use.currentText()
        for widget in (self.dtype, self.shape, self.init):
            widget.setVisible(use == "tensor")
        self.value_editor.widget.setVisible(use == "constant")
        default = (
            "randn"
            if self.dtype.currentText() in FLOAT_DTYPES
            else "ones"
            if self.dtype.currentText() == "bool"
            else "zeros"
        )
        self.init.setPlaceholderText(default)

    def _rename(self) -> None:
        base = f"inputs.{self.name}"
        for suffix, widget in (
            ("use", self.use),
            ("dtype", self.dtype),
            ("shape", self.shape),
            ("init", self.init),
            ("value", self.value_editor.widget),
            ("name", self.name_edit),
            ("remove", self.remove),
        ):
            if widget is not None:
                widget.setObjectName(f"{base}.{suffix}")

    def _wire(self) -> None:
        self.use.currentIndexChanged.connect(self._on_use_current_index_changed)
        self.dtype.currentIndexChanged.connect(self._on_part_edited)
        self.shape.textEdited.connect(self._on_part_edited)
        self.init.textEdited.connect(self._on_part_edited)
        self.value_editor.edited.connect(self._on_part_edited)
        if self.name_edit is not None:
            self.name_edit.textEdited.connect(self._on_name_edit_text_edited)
        if self.remove is not None:
            self.remove.clicked.connect(self._on_remove_clicked)

    def value(self) -> tuple[str, Any] | None:
        """("input", tensor spec text), ("constant", value), or None (default, or no value yet)."""
        if self._clean:
            return self._original
        use = self.use.currentText()
        if use == "tensor":
            return "input", compose_tensor(self.dtype.currentText(), self.shape.text(), self.init.text())
        if use == "constant":
            value = self.value_editor.value()
            return None if value is None else ("constant", value)
        return None

    def problems(self) -> list[Problem]:
        use, given = self.use.currentText(), self.value()
        if not self.name:
            return [Problem("inputs", "An input row has no parameter name.")] if given else []
        if use == "constant":
            key = f"module.constants.{self.name}"
            if self.value_editor.parse_error:
                return [Problem(key, f"{self.name}: {self.value_editor.parse_error}")]
            if given is None:
                return [Problem(key, f"Give the constant {self.name} a value ({TOML_EXAMPLES}).")]
            if not self.name.isidentifier():
                return [Problem(key, f"Constant name '{self.name}' is not a Python parameter name.")]
        if use == "tensor" and not self.shape.text().strip():
            return [
                Problem(
                    f"inputs.{self.name}",
                    f"{self.name} has no shape, so it is a 0-dim tensor; give its dims, "
                    "such as {batch},{seq} or 1,128.",
                    "warning",
                )
            ]
        return []

    def mark(self, problems: list[Problem]) -> None:
        """Colour the parameter's name by its worst problem; the messages are under the table."""
        worst = "error" if any(p.severity == "error" for p in problems) else "warning" if problems else None
        tip = "\n".join(p.message for p in problems)
        colour = theme.PROBLEM_COLOURS.get(worst) if worst else None
        if self.name_item is not None:
            assert self.param is not None  # a parameter's row names it in an item
            self.name_item.setForeground(QBrush(QColor(colour)) if colour else QBrush())
            self.name_item.setToolTip("\n".join(filter(None, [signature_text(self.param), tip])))
        else:
            assert self.name_edit is not None
            self.name_edit.setStyleSheet(f"color: {colour};" if colour else "")
            self.name_edit.setToolTip(tip)

    def _on_use_current_index_changed(self) -> None:
        p = self.param
        if (
            self.use.currentText() == "constant"
            and not self.value_editor.widget.text()
            and p
            and p.get("widget") in _SCALARS
            and p.get("default") is not None
        ):
            self.value_editor.set_value(p["default"])
        self._on_part_edited()

    def _on_part_edited(self) -> None:
        self._clean = False
        self._enable()
        self.edited.emit()

    def _on_name_edit_text_edited(self) -> None:
        self._rename()
        self._on_part_edited()

    def _on_remove_clicked(self) -> None:
        self.removed.emit(self)


class InputsEditor(QWidget):
    """``inputs`` and ``module.constants``: one row per forward parameter, plus rows the spec adds."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rows: list[InputRow] = []
        self._quiet = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.note = note_label("inputs-note")
        layout.addWidget(self.note)
        self.table = FitTable(0, len(COLUMNS))
        self.table.setObjectName("inputs-table")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        header = self.table.horizontalHeader()
        header.setMinimumSectionSize(MIN_COLUMN)
        for column in range(len(COLUMNS)):
            stretch = column in (SHAPE, INIT, VALUE)
            header.setSectionResizeMode(
                column, QHeaderView.ResizeMode.Stretch if stretch else QHeaderView.ResizeMode.ResizeToContents
            )
        self.table.setColumnHidden(VALUE, True)
        layout.addWidget(self.table)
        self.problem = problem_label("inputs")
        layout.addWidget(self.problem)
        bottom = QHBoxLayout()
        self.add_button = QPushButton("Add input")
        self.add_button.setObjectName("add-input-button")
        self.add_button.setToolTip("A forward parameter by name, for functions or objects without a readable signature")
        bottom.addWidget(self.add_button)
        bottom.addStretch(1)
        layout.addLayout(bottom)
        self.add_button.clicked.connect(self._on_add_button_clicked)

    def set_state(
        self, params: list[dict[str, Any]] | None, inputs: dict[str, str], constants: dict[str, Any], note: str = ""
    ) -> None:
        """Rows for ``params`` (None: not resolved) and for every input and constant the spec names."""
        self._quiet = True
        try:
            self.table.setRowCount(0)
            for row in self.rows:
                row.deleteLater()
            self.rows = []
            listed = [p for p in params or [] if p.get("kind") not in ("*args", "**kwargs")]
            first_tensor = next((p["name"] for p in listed if p.get("widget") == "tensor"), None)
            used_inputs, used_constants = set(), set()
            for p in listed:
                name = p["name"]
                if name in inputs:
                    self._add(p, name, "tensor", inputs[name], clean=True)
                    used_inputs.add(name)
                elif name in constants:
                    self._add(p, name, "constant", constants[name], clean=True)
                    used_constants.add(name)
                else:
                    use = _default_use(p, name == first_tensor, bool(inputs))
                    self._add(p, name, use, None, clean=use == "default")
            # Everything else the spec names keeps a row, so nothing is lost (validation says what is odd).
            for name, text in inputs.items():
                if name not in used_inputs:
                    self._add(None, name, "tensor", text, clean=True)
            for name, value in constants.items():
                if name not in used_constants:
                    self._add(None, name, "constant", value, clean=True)
        finally:
            self._quiet = False
        self._columns()
        self._order_tabs()
        if params is None:
            note = note or "Resolve the entry to list its forward parameters, or add inputs by hand."
        self.note.setText(note)
        self.note.setVisible(bool(note))

    def _add(self, p: dict[str, Any] | None, name: str, use: str, given: Any, *, clean: bool) -> InputRow:
        row = InputRow(self.table, p, name, use, given, clean)
        row.edited.connect(self._on_row_edited)
        row.removed.connect(self._on_row_removed)
        self.rows.append(row)
        return row

    def value(self) -> tuple[dict[str, str], dict[str, Any]]:
        inputs: dict[str, str] = {}
        constants: dict[str, Any] = {}
        for row in self.rows:
            given = row.value()
            if given is None or not row.name:
                continue
            kind, value = given
            (inputs if kind == "input" else constants).setdefault(row.name, value)
        return inputs, constants

    def problems(self) -> list[Problem]:
        out = [p for row in self.rows for p in row.problems()]
        seen: set[tuple[str, str]] = set()
        for row in self.rows:
            key = (row.name, row.use.currentText())
            if row.name and key in seen:
                out.append(Problem(f"inputs.{row.name}", f"'{row.name}' has two rows; the first one counts."))
            seen.add(key)
        return out

    def show_problems(self, by_field: dict[str, list[Problem]], *, hold: bool = False) -> None:
        """Under the table and on each row's name; ``hold``: while the user types in the form's tables, the lines
        under this one keep their place (``problem_lines.show_problems``)."""
        mine = [key for key in by_field if key == "inputs" or key.startswith(("inputs.", "module.constants."))]
        problems = [p for key in mine for p in by_field.pop(key)]
        show_problems(self.problem, problems, hold=hold)
        for row in self.rows:
            row.mark([p for p in problems if row.name and p.field.rpartition(".")[2] == row.name])

    def _order_tabs(self) -> None:
        tab_before(self.add_button, [w for row in self.rows for w in row.editors()])

    def _columns(self) -> None:
        """The Value column only while some row is a constant."""
        self.table.setColumnHidden(VALUE, not any(r.use.currentText() == "constant" for r in self.rows))
        self.table.updateGeometry()

    def _on_row_edited(self) -> None:
        self._columns()
        if not self._quiet:
            self.edited.emit()

    def _on_add_button_clicked(self) -> None:
        row = self._add(None, "", "tensor", None, clean=False)
        assert row.name_edit is not None  # a row of no parameter is named in a line edit
        self._columns()
        self._order_tabs()
        row.name_edit.setFocus()
        self.edited.emit()

    def _on_row_removed(self, row: InputRow) -> None:
        self.table.removeRow(self.rows.index(row))
        self.rows.remove(row)
        row.deleteLater()
        self._columns()
        self.edited.emit()
