"""One editor per kind of spec field, chosen from the field's type and ``ui(...)`` metadata."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from neffbench.schema.compiler import split_extra_args

INT_LIMIT = 2**31 - 1  # QSpinBox holds a C int


class FieldEditor(QObject):
    """Wraps a widget: reads and writes the field's Python value and reports edits as ``edited``.

    ``parse_error`` is a message when the widget's text cannot become a value at all (validation
    proper is the spec's job).
    """

    edited = Signal()

    def __init__(self, field: dataclasses.Field, widget: QWidget):
        super().__init__(widget)
        self.field = field
        self.widget = widget
        self.parse_error: str | None = None
        widget.setToolTip(field.metadata["help"])

    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    def show_ignored(self, reason: str | None, label: QWidget, *, editable: bool = False) -> None:
        """Disable the editor while the spec's other values make the field irrelevant, and say why first in
        its tooltip and its label's. ``editable`` keeps it enabled (validation blames its value, which the
        user must be able to change); ``None`` restores the field."""
        tip = self.field.metadata["help"] if reason is None else ignored_tooltip(reason, self.field.metadata["help"])
        self.widget.setEnabled(reason is None or editable)
        self.widget.setToolTip(tip)
        label.setEnabled(reason is None or editable)
        label.setToolTip(tip)


def ignored_tooltip(reason: str, help_text: str) -> str:
    """``Ignored: <reason>.`` then the field's help."""
    return f"Ignored: {reason}.\n\n{help_text}"


class BoolEditor(FieldEditor):
    def __init__(self, field: dataclasses.Field):
        box = QCheckBox()
        super().__init__(field, box)
        box.toggled.connect(self.edited)

    def value(self) -> bool:
        return self.widget.isChecked()

    def set_value(self, value: bool) -> None:
        self.widget.setChecked(bool(value))


class ChoiceEditor(FieldEditor):
    """A combo box whose items show ``choice_labels`` (``trn2 (cayman)``) and hold the values files keep."""

    def __init__(self, field: dataclasses.Field):
        combo = QComboBox()
        labels = field.metadata.get("choice_labels") or {}
        for choice in field.metadata["choices"]:
            combo.addItem(labels.get(choice, choice), choice)
        super().__init__(field, combo)
        combo.currentIndexChanged.connect(self.edited)

    def value(self) -> str:
        return self.widget.currentData()

    def set_value(self, value: str) -> None:
        index = self.widget.findData(str(value))
        if index < 0:  # a value the form does not offer still shows (validation reports it)
            self.widget.addItem(str(value), str(value))
            index = self.widget.count() - 1
        self.widget.setCurrentIndex(index)


class _NumberEditor(FieldEditor):
    """Spin box bounded by the field's min/max; an optional field gets an "unset" value below min."""

    def __init__(self, field: dataclasses.Field, box: QAbstractSpinBox, *, is_float: bool):
        meta = field.metadata
        self.optional = meta["optional"]
        lo = meta["min"] if meta["min"] is not None else -INT_LIMIT
        hi = meta["max"] if meta["max"] is not None else INT_LIMIT
        if not is_float:
            lo, hi = max(int(lo), -INT_LIMIT), min(int(hi), INT_LIMIT)
        step = meta["step"] or 1
        self.unset = (lo - step) if self.optional else None
        if is_float:
            box.setDecimals(meta["decimals"] if meta["decimals"] is not None else 4)
        box.setRange(self.unset if self.optional else lo, hi)
        box.setSingleStep(step)
        box.setAccelerated(True)
        box.setKeyboardTracking(True)
        if self.optional:
            box.setSpecialValueText("unset")
        super().__init__(field, box)
        box.valueChanged.connect(self.edited)

    def value(self) -> Any:
        v = self.widget.value()
        if self.optional and v == self.widget.minimum():
            return None
        return v

    def set_value(self, value: Any) -> None:
        self.widget.setValue(self.widget.minimum() if value is None else value)


class IntEditor(_NumberEditor):
    def __init__(self, field: dataclasses.Field):
        super().__init__(field, QSpinBox(), is_float=False)

    def value(self) -> int | None:
        v = super().value()
        return None if v is None else int(v)


class FloatEditor(_NumberEditor):
    def __init__(self, field: dataclasses.Field):
        super().__init__(field, QDoubleSpinBox(), is_float=True)

    def value(self) -> float | None:
        v = super().value()
        return None if v is None else float(v)


class TextEditor(FieldEditor):
    def __init__(self, field: dataclasses.Field):
        line = QLineEdit()
        super().__init__(field, line)
        line.textEdited.connect(self.edited)

    def value(self) -> str:
        return self.widget.text()

    def set_value(self, value: str) -> None:
        self.widget.setText(str(value))


class IntListEditor(FieldEditor):
    """Buckets: whole numbers separated by commas or spaces."""

    def __init__(self, field: dataclasses.Field):
        line = QLineEdit()
        line.setPlaceholderText("e.g. 1, 8, 128")
        super().__init__(field, line)
        self._last: tuple[int, ...] = ()
        line.textEdited.connect(self.edited)

    def value(self) -> tuple[int, ...]:
        tokens = self.widget.text().replace(",", " ").split()
        try:
            values = tuple(int(t) for t in tokens)
        except ValueError:
            bad = next(t for t in tokens if not t.lstrip("-").isdigit())
            self.parse_error = f"'{bad}' is not a whole number; list token counts like 1, 8, 128."
            return self._last
        self.parse_error = None
        self._last = values
        return values

    def set_value(self, value: tuple[int, ...]) -> None:
        self._last = tuple(value)
        self.parse_error = None
        self.widget.setText(", ".join(str(v) for v in value))


class ArgsEditor(FieldEditor):
    """Extra compiler arguments typed as one shell line."""

    def __init__(self, field: dataclasses.Field):
        line = QLineEdit()
        line.setPlaceholderText("e.g. --verbose info")
        super().__init__(field, line)
        self._last: tuple[str, ...] = ()
        line.textEdited.connect(self.edited)

    def value(self) -> tuple[str, ...]:
        try:
            self._last = split_extra_args(self.widget.text())
            self.parse_error = None
        except ValueError as exc:
            self.parse_error = f"Cannot split into arguments: {exc}."
        return self._last

    def set_value(self, value: tuple[str, ...]) -> None:
        import shlex

        self._last = tuple(value)
        self.parse_error = None
        self.widget.setText(shlex.join(value))


def _plain_type(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return next(a for a in typing.get_args(tp) if a is not type(None))
    return tp


def editor_for(field: dataclasses.Field, tp: Any) -> FieldEditor:
    """The editor for a field of type ``tp`` (resolved type hint)."""
    tp = _plain_type(tp)
    if field.metadata.get("choices"):
        return ChoiceEditor(field)
    if tp is bool:
        return BoolEditor(field)
    if tp is int:
        return IntEditor(field)
    if tp is float:
        return FloatEditor(field)
    if typing.get_origin(tp) is tuple:
        item = typing.get_args(tp)[0]
        return IntListEditor(field) if item is int else ArgsEditor(field)
    return TextEditor(field)
