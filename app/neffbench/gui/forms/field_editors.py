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
# What a float box takes typed; beyond it a value only comes from a file (and is kept as it is).
FLOAT_LIMIT = 1e15


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


class _FieldRangeSteps:
    """Arrows and the wheel step within the field's range (and from its minimum to "unset"), while typing is
    never clamped: the box itself takes any number it can hold, and validation shows an out-of-range one as the
    field's error ("nothing is clamped"). Mixed into QSpinBox and QDoubleSpinBox."""

    field_min: float
    field_max: float
    unset: float | None

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:  # noqa: N802 - Qt's name
        box = typing.cast(QAbstractSpinBox, self)
        flags = QAbstractSpinBox.StepEnabledFlag.StepNone
        if box.isReadOnly() or not box.isEnabled():
            return flags
        v = box.value()  # type: ignore[attr-defined]
        if self.unset is not None and v == box.minimum():  # type: ignore[attr-defined]
            return QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if v < self.field_max:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if v > self.field_min or self.unset is not None:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        box = typing.cast(typing.Any, self)
        v, step = box.value(), box.singleStep()
        if self.unset is not None and v == box.minimum():
            target = self.field_min if steps > 0 else v
        elif steps < 0 and self.unset is not None and v <= self.field_min:
            target = box.minimum()
        elif steps > 0:
            target = min(max(v + steps * step, self.field_min), max(v, self.field_max))
        else:
            target = max(min(v + steps * step, self.field_max), min(v, self.field_min))
        box.setValue(target)
        box.selectAll()


class _IntBox(_FieldRangeSteps, QSpinBox):
    pass


class _FloatBox(_FieldRangeSteps, QDoubleSpinBox):
    pass


def _decimals_for(value: float, decimals: int) -> int:
    """The decimals that show ``value`` exactly, at least the field's: a value with more digits (from a file) is
    shown whole rather than rounded away."""
    while decimals < 16 and float(f"{value:.{decimals}f}") != value:
        decimals += 1
    return decimals


class _NumberEditor(FieldEditor):
    """Spin box stepping within the field's min/max but taking any number typed; an optional field gets an
    "unset" value below everything."""

    def __init__(self, field: dataclasses.Field, box: typing.Any, *, is_float: bool):
        meta = field.metadata
        self.optional = meta["optional"]
        limit = FLOAT_LIMIT if is_float else INT_LIMIT
        lo = meta["min"] if meta["min"] is not None else -limit
        hi = meta["max"] if meta["max"] is not None else limit
        if not is_float:
            lo, hi = max(int(lo), -INT_LIMIT + 1), min(int(hi), INT_LIMIT)
        step = meta["step"] or 1
        box.field_min, box.field_max = lo, hi
        # The box's own range is as wide as it can hold, so that nothing typed is changed; the lowest value is
        # "unset" for an optional field.
        self.unset = -limit if self.optional else None
        box.unset = self.unset
        if is_float:
            box.setDecimals(meta["decimals"] if meta["decimals"] is not None else 4)
        box.setRange(-limit, limit)
        box.setSingleStep(step)
        box.setAccelerated(True)
        box.setKeyboardTracking(True)
        if self.optional:
            box.setSpecialValueText("unset")
        super().__init__(field, box)
        # A value from a file beyond what the box can hold is kept as it is until the user types another.
        self._held: Any = None
        box.valueChanged.connect(self._on_value_changed)

    def _on_value_changed(self, _value: float) -> None:
        self._held = None
        self.edited.emit()

    def value(self) -> Any:
        if self._held is not None:
            return self._held
        v = self.widget.value()
        if self.optional and v == self.widget.minimum():
            return None
        return v

    def set_value(self, value: Any) -> None:
        box = self.widget
        if value is not None and isinstance(box, QDoubleSpinBox):
            box.setDecimals(_decimals_for(float(value), box.decimals()))
        lowest = box.minimum() + (1 if self.optional else 0)
        box.setValue(box.minimum() if value is None else min(max(value, lowest), box.maximum()))
        self._held = value if value is not None and not lowest <= value <= box.maximum() else None


class IntEditor(_NumberEditor):
    def __init__(self, field: dataclasses.Field):
        super().__init__(field, _IntBox(), is_float=False)

    def value(self) -> int | None:
        v = super().value()
        return None if v is None else int(v)


class FloatEditor(_NumberEditor):
    def __init__(self, field: dataclasses.Field):
        super().__init__(field, _FloatBox(), is_float=True)

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
