"""One editor per kind of spec field, chosen by its ``ui(...)`` metadata and an extensible map from its type."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QSize, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QLineEdit, QWidget

from neffbench.gui.widgets import wheel
from neffbench.schema.compiler import split_extra_args
from neffbench.words import number


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
        wheel.guard(widget)

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
    widget: QCheckBox

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

    widget: QComboBox

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


class NumberBox(QAbstractSpinBox):
    """A number field whose value is the number typed: of any size, with every digit, never clamped or rounded.

    Validation shows a number out of the field's range as the field's error ("nothing is clamped"); only the
    arrows (and the wheel, with focus) stop at the range, and an optional field's go below its minimum to unset,
    shown empty. ``valueChanged`` carries what the text now reads (None: unset, or not a number).
    """

    valueChanged = Signal(object)

    def __init__(self, *, whole: bool, minimum: float | None, maximum: float | None, step: float, optional: bool):
        super().__init__()
        self.whole = whole
        self.field_min = -math.inf if minimum is None else minimum
        self.field_max = math.inf if maximum is None else maximum
        self.optional = optional
        self.step = step
        self.setAccelerated(True)
        self.setPlaceholderText("unset" if optional else "")
        self.lineEdit().textChanged.connect(self._on_text_changed)

    def read(self) -> tuple[int | float | None, str | None]:
        """(the value, None) when the text is a number (or empty, for an optional field); else (None, why not)."""
        return self._parse(self.text())

    def _parse(self, text: str) -> tuple[int | float | None, str | None]:
        text = text.strip()
        kind = "a whole number" if self.whole else "a number"
        if not text:
            return None, None if self.optional else f"Empty: type {kind}."
        try:
            value = int(text) if self.whole else float(text)
        except ValueError:
            return None, f"'{text}' is not {kind}."
        if not math.isfinite(value):
            return None, f"'{text}' is beyond any {kind} a spec holds."
        return value, None

    def value(self) -> int | float | None:
        return self.read()[0]

    def setValue(self, value: float | None) -> None:  # noqa: N802 - as Qt's spin boxes name it
        self.lineEdit().setText("" if value is None else number(value))

    def setPlaceholderText(self, text: str) -> None:  # noqa: N802 - as Qt's line edits name it
        self.lineEdit().setPlaceholderText(text)

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        """Keys that cannot be part of a number are refused; any number is taken, however large or precise, and
        a number half typed stays as it is (the field's error says what it lacks)."""
        allowed = "0123456789+- " if self.whole else "0123456789+-.eE "
        if any(c not in allowed for c in text):
            return QValidator.State.Invalid, text, pos
        complete = self._parse(text)[1] is None
        return (QValidator.State.Acceptable if complete else QValidator.State.Intermediate), text, pos

    def fixup(self, text: str) -> str:
        return text  # what was typed stays, as typed: a half-typed number is the field's error, not undone

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:  # noqa: N802 - Qt's name
        flags = QAbstractSpinBox.StepEnabledFlag.StepNone
        value, problem = self.read()
        if self.isReadOnly() or not self.isEnabled() or problem:
            return flags
        if value is None:
            return QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if value < self.field_max:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if value > self.field_min or self.optional:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        value, problem = self.read()
        if problem:
            return
        if value is None:
            target: float | None = value if steps < 0 else (self.field_min if math.isfinite(self.field_min) else 0)
        elif steps < 0 and self.optional and value <= self.field_min:
            target = None
        elif steps > 0:
            target = min(max(value + steps * self.step, self.field_min), max(value, self.field_max))
        else:
            target = max(min(value + steps * self.step, self.field_max), min(value, self.field_min))
        if target is not None:
            # A step of 0.1 from 0.2 is 0.3, not 0.30000000000000004: the digits of the value and the step.
            target = int(target) if self.whole else round(float(target), max(_decimals(value), _decimals(self.step)))
        self.setValue(target)
        self.selectAll()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._wide_enough(super().sizeHint())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._wide_enough(super().minimumSizeHint())

    def _wide_enough(self, hint: QSize) -> QSize:
        # Qt sizes a spin box by the text of its range, which this box does not have: the width of a big number.
        return QSize(hint.width() + self.fontMetrics().horizontalAdvance("-2147483647"), hint.height())

    def _on_text_changed(self, _text: str) -> None:
        self.valueChanged.emit(self.value())


def _decimals(value: float | None) -> int:
    """Digits after the point in the shortest text of ``value`` (``1e-06``: 6)."""
    if value is None:
        return 0
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    digits = len(mantissa.partition(".")[2].rstrip("0"))
    return max(0, digits - int(exponent or 0))


class _NumberEditor(FieldEditor):
    """A NumberBox for a number field: the value typed, or for text that is no number yet the last one it read, with
    the field's error saying why."""

    widget: NumberBox

    def __init__(self, field: dataclasses.Field, *, whole: bool):
        meta = field.metadata
        self.optional = meta["optional"]
        box = NumberBox(
            whole=whole, minimum=meta["min"], maximum=meta["max"], step=meta["step"] or 1, optional=self.optional
        )
        super().__init__(field, box)
        self._last: Any = None
        box.valueChanged.connect(self._on_value_changed)

    def _on_value_changed(self, _value: Any) -> None:
        self.edited.emit()

    def value(self) -> Any:
        value, problem = self.widget.read()
        self.parse_error = problem
        if problem is None:
            self._last = value
        return self._last

    def set_value(self, value: Any) -> None:
        self._last = value
        self.parse_error = None
        self.widget.setValue(value)


class IntEditor(_NumberEditor):
    def __init__(self, field: dataclasses.Field):
        super().__init__(field, whole=True)

    def value(self) -> int | None:
        v = super().value()
        return None if v is None else int(v)


class FloatEditor(_NumberEditor):
    def __init__(self, field: dataclasses.Field):
        super().__init__(field, whole=False)

    def value(self) -> float | None:
        v = super().value()
        return None if v is None else float(v)


class TextEditor(FieldEditor):
    widget: QLineEdit

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

    widget: QLineEdit

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

    widget: QLineEdit

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


EditorFactory = Callable[[dataclasses.Field], FieldEditor]

# The type map: a field's type (optional or not) to the editor that edits it. A field with ``choices`` gets a
# ChoiceEditor whatever its type.
_TYPE_MAP: dict[Any, EditorFactory] = {
    bool: BoolEditor,
    int: IntEditor,
    float: FloatEditor,
    str: TextEditor,
    tuple[int, ...]: IntListEditor,
    tuple[str, ...]: ArgsEditor,
}


class UnknownFieldType(TypeError):
    """A spec field of a type no editor is registered for."""


def register_editor(tp: Any, factory: EditorFactory) -> None:
    """Edit fields of type ``tp`` (``int``, ``tuple[str, ...]``, ...) with ``factory(field)``; replaces any editor
    registered for it before."""
    _TYPE_MAP[tp] = factory


def _plain_type(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return next(a for a in typing.get_args(tp) if a is not type(None))
    return tp


def editor_for(field: dataclasses.Field, tp: Any) -> FieldEditor:
    """The editor for a field of type ``tp`` (resolved type hint); UnknownFieldType when no editor is registered for
    the type."""
    if field.metadata.get("choices"):
        return ChoiceEditor(field)
    plain = _plain_type(tp)
    try:
        factory = _TYPE_MAP[plain]
    except (KeyError, TypeError):  # TypeError: an unhashable hint
        raise UnknownFieldType(
            f"No editor for the field '{field.name}' of type {_type_name(tp)}: "
            "register one with neffbench.gui.forms.field_editors.register_editor."
        ) from None
    return factory(field)


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")
