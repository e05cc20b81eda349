"""The module form's constructor arguments: one generated field per factory parameter, and TOML rows for the rest."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from neffbench.gui.forms.field_editors import FieldEditor
from neffbench.gui.forms.problem_lines import problem_label, show_problems
from neffbench.kernels.module.gui.kwargs_rows import BOUNDLESS, UNSET, SignatureRow, TomlRow
from neffbench.kernels.module.gui.parts import note_label
from neffbench.spec import Problem


class KwargsEditor(QWidget):
    """``module.kwargs``: generated rows for a resolved factory signature, TOML rows for everything else."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("module.kwargs")
        self.params: list[dict[str, Any]] | None = None
        self.callee = ""
        self.open_ended = True
        self.rows: list[SignatureRow] = []
        self.toml_rows: list[TomlRow] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.note = note_label("kwargs-note")
        layout.addWidget(self.note)
        self._rows_holder = QWidget()
        self._form = QFormLayout(self._rows_holder)
        self._form.setContentsMargins(0, 0, 0, 0)
        self._form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.addWidget(self._rows_holder)
        self._toml_box = QVBoxLayout()
        self._toml_box.setSpacing(3)
        layout.addLayout(self._toml_box)
        self.add_button = QPushButton("Add argument")
        self.add_button.setObjectName("add-kwarg-button")
        self.add_button.setToolTip("An argument by name with a TOML value (for parameters the signature does not list)")
        bottom = QHBoxLayout()
        bottom.addWidget(self.add_button)
        bottom.addStretch(1)
        layout.addLayout(bottom)
        self.problem = problem_label("module.kwargs")
        layout.addWidget(self.problem)
        self.add_button.clicked.connect(self._on_add_button_clicked)

    def set_state(self, params: list[dict[str, Any]] | None, kwargs: dict[str, Any], callee: str = "") -> None:
        """Show ``kwargs`` in fields generated from ``params`` (None: not resolved, TOML rows only)."""
        for row in self.rows:
            row.deleteLater()
        while self._form.rowCount():
            self._form.removeRow(0)
        for toml_row in self.toml_rows:
            self._drop(toml_row)
        self.rows, self.toml_rows = [], []
        self.params, self.callee = params, callee
        listed = [p for p in params or [] if p["kind"] not in BOUNDLESS]
        self.open_ended = params is None or any(p["kind"] == "**kwargs" for p in params)
        for p in listed:
            value = kwargs.get(p["name"], UNSET)
            row = SignatureRow(p, value, self._form)
            row.edited.connect(self.edited)
            self.rows.append(row)
        names = {p["name"] for p in listed}
        for name, value in kwargs.items():
            if name not in names:
                self._add_toml_row(name, value)
        self._rows_holder.setVisible(bool(self.rows))
        if params is None:
            self.note.setText(
                "Resolve the entry to get one field per parameter; until then each argument is a name and a TOML value."
            )
        elif not listed:
            self.note.setText(f"{callee or 'The factory'} takes no arguments by name.")
        else:
            self.note.setText("Bold: set, written into module.kwargs. The others keep their defaults.")

    def _add_toml_row(self, name: str, value: Any) -> TomlRow:
        row = TomlRow(name, value, self._toml_box)
        row.edited.connect(self.edited)
        row.removed.connect(self._on_row_removed)
        self.toml_rows.append(row)
        return row

    def _all_rows(self) -> list[SignatureRow | TomlRow]:
        return [*self.rows, *self.toml_rows]

    def value(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for row in self._all_rows():
            value = row.value()
            if value is not UNSET and row.name:
                out.setdefault(row.name, value)
        return out

    def editor(self, name: str) -> FieldEditor | None:
        return next((r.editor for r in self._all_rows() if r.name == name), None)

    def problems(self, *, current: bool) -> list[Problem]:
        """Text that is no value yet; with a ``current`` signature also missing and unknown arguments."""
        out = [p for row in self._all_rows() for p in row.problems()]
        seen: set[str] = set()
        for row in self._all_rows():
            if row.value() is not UNSET and row.name in seen:
                out.append(Problem(f"module.kwargs.{row.name}", f"'{row.name}' is given twice; the first one counts."))
            seen.add(row.name)
        if not current or self.params is None:
            return out
        for row in self.rows:
            if not row.param.get("has_default") and row.value() is UNSET and row.param["kind"] != "positional-only":
                out.append(Problem(row.key, f"{self.callee}(...) needs {row.name}: it has no default."))
        if not self.open_ended:
            for row in self.toml_rows:
                if row.name and row.value() is not UNSET:
                    out.append(
                        Problem(
                            f"module.kwargs.{row.name}",
                            f"{self.callee}(...) has no parameter '{row.name}'; the call will fail.",
                            "warning",
                        )
                    )
        return out

    def show_problems(self, by_field: dict[str, list[Problem]]) -> None:
        for row in self._all_rows():
            key = f"module.kwargs.{row.name}"
            # A nested object's own problems (module.kwargs.config.kwargs) stand under the argument that makes it.
            mine = [k for k in list(by_field) if row.name and (k == key or k.startswith(key + "."))]
            show_problems(row.problem, [p for k in mine for p in by_field.pop(k)])
        show_problems(self.problem, by_field.pop("module.kwargs", []))

    def _on_add_button_clicked(self) -> None:
        row = self._add_toml_row("", UNSET)
        row.name_edit.setFocus()

    def _on_row_removed(self, row: TomlRow) -> None:
        self.toml_rows.remove(row)
        self._drop(row)
        self.edited.emit()

    def _drop(self, row: TomlRow) -> None:
        self._toml_box.removeWidget(row.widget)
        row.widget.hide()
        row.widget.deleteLater()
        row.deleteLater()
