"""Pieces the module form shares: TOML value text, tensor-spec columns, editors, problem lines, rows and tables."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
import sys
from typing import Any

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QTableWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.forms.field_editors import FieldEditor
from neffbench.gui.forms.problem_lines import problem_label
from neffbench.kernels.module.tensors import DTYPE_ALIASES
from neffbench.schema import ui

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DTYPES = tuple(dict.fromkeys(DTYPE_ALIASES.values()))  # canonical names, floats first
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# dtype[dims] init, as tensors.parse splits it; loose here so that text which does not parse still fills the columns.
_SPEC_RE = re.compile(r"\s*([^\[\s]*)\s*\[([^\]]*)\]\s*(.*?)\s*", re.DOTALL)
TOML_EXAMPLES = '64, 1e-6, true, "gelu" or { entry = "package.module:Config", kwargs = { hidden_size = 64 } }'


# ---- TOML values ----


def format_toml(value: Any) -> str:
    """``value`` as a TOML inline value (what a TOML row shows; ``parse_toml`` reads it back equal)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = (f"{k if _BARE_KEY.fullmatch(k) else format_toml(k)} = {format_toml(v)}" for k, v in value.items())
        return "{ " + ", ".join(items) + " }"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return format_toml(str(value))


def parse_toml(text: str) -> Any:
    """One TOML value; ValueError with a sentence when the text is not one."""
    try:
        table = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError as exc:
        reason = re.sub(r"\s*\(at .*\)$", "", str(exc))
        raise ValueError(f"'{text.strip()}' is not a TOML value ({reason}); such as {TOML_EXAMPLES}.") from None
    if set(table) != {"v"}:
        raise ValueError(f"'{text.strip()}' is more than one TOML value; such as {TOML_EXAMPLES}.")
    return table["v"]


# ---- tensor specs in columns ----


def split_tensor(text: str) -> tuple[str, str, str]:
    """(canonical dtype, dims, init) of a tensor spec's text; whatever does not fit lands in init."""
    match = _SPEC_RE.fullmatch(text)
    if match is None:
        return "", "", text.strip()
    dtype, dims, init = match.groups()
    shape = ",".join(d.strip() for d in dims.split(",")) if dims.strip() else ""
    return DTYPE_ALIASES.get(dtype, dtype), shape, init


def compose_tensor(dtype: str, shape: str, init: str) -> str:
    dims = ",".join(d.strip() for d in shape.split(",")) if shape.strip() else ""
    return f"{dtype}[{dims}] {init.strip()}".strip()


# ---- editors the field_editors family lacks ----


def meta_field(label: str, help: str, **kwargs: Any) -> dataclasses.Field:
    """A stand-in dataclass field so that generated rows can use the FieldEditors of spec fields."""
    return dataclasses.field(metadata=ui(label, help, **kwargs))


class FloatTextEditor(FieldEditor):
    """Any float as typed (1e-12 stays 1e-12); empty text is None. Bounds from min/max."""

    widget: QLineEdit

    def __init__(self, field: dataclasses.Field):
        line = QLineEdit()
        super().__init__(field, line)
        line.textEdited.connect(self.edited)

    def value(self) -> float | None:
        text = self.widget.text().strip()
        self.parse_error = None
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            self.parse_error = f"'{text}' is not a number; type one such as 0.1 or 1e-6."
            return None
        lo, hi = self.field.metadata["min"], self.field.metadata["max"]
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            self.parse_error = (
                f"{text} is outside {lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}."
            )
        return value

    def set_value(self, value: float | None) -> None:
        self.parse_error = None
        self.widget.setText("" if value is None else repr(float(value)))


class TomlEditor(FieldEditor):
    """A TOML value typed on one line; empty text is None. ``lenient``: text that is no TOML is the string itself."""

    widget: QLineEdit

    def __init__(self, field: dataclasses.Field, *, lenient: bool = False):
        line = QLineEdit()
        super().__init__(field, line)
        self.lenient = lenient
        line.textEdited.connect(self.edited)

    def value(self) -> Any:
        text = self.widget.text().strip()
        self.parse_error = None
        if not text:
            return None
        try:
            return parse_toml(text)
        except ValueError as exc:
            if self.lenient:
                return text
            self.parse_error = str(exc)
            return None

    def set_value(self, value: Any) -> None:
        self.parse_error = None
        self.widget.setText("" if value is None else format_toml(value))


# ---- problems and rows ----


def note_label(key: str) -> QLabel:
    """A hint about a section (what Resolve will add, what bold means): italic, in the text colour."""
    label = QLabel()
    label.setObjectName(key)
    label.setWordWrap(True)
    font = label.font()
    font.setItalic(True)
    label.setFont(font)
    return label


def disclosure(text: str) -> QToolButton:
    """A flat ▸/▾ button that shows and hides a section's advanced fields."""
    button = QToolButton(text=text, checkable=True, autoRaise=True)  # type: ignore[call-arg]  # a Qt property keyword
    button.setObjectName(f"disclosure:{text}")
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    button.setArrowType(Qt.ArrowType.RightArrow)
    button.toggled.connect(lambda on: button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow))
    return button


def group_box(title: str, body: QVBoxLayout) -> QVBoxLayout:
    """A titled section of the form; its layout is returned."""
    group = QGroupBox(title)
    group.setObjectName(f"section:{title}")
    layout = QVBoxLayout(group)
    layout.setContentsMargins(8, 4, 8, 6)
    body.addWidget(group)
    return layout


def form_layout(parent_layout: QVBoxLayout | None = None, widget: QWidget | None = None) -> QFormLayout:
    form = QFormLayout(widget) if widget is not None else QFormLayout()
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    if widget is not None:
        form.setContentsMargins(0, 0, 0, 0)
    if parent_layout is not None:
        parent_layout.addLayout(form)
    return form


class FieldRow(QObject):
    """A spec field's label, editor and problem line; until edited it gives back the value it was shown."""

    edited = Signal()

    def __init__(self, key: str, editor: FieldEditor, layout: QFormLayout, *, beside: QWidget | None = None):
        super().__init__(editor.widget)
        self.key = key
        self.editor = editor
        self.layout = layout
        self._original: Any = None
        self._dirty = False
        self._quiet = False
        editor.widget.setObjectName(key)
        meta = editor.field.metadata
        self.label = QLabel(meta["label"])
        self.label.setToolTip(meta["help"])
        self.label.setBuddy(editor.widget)
        self.problem = problem_label(key)
        self.holder = QWidget()
        box = QVBoxLayout(self.holder)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(1)
        box.addWidget(beside or editor.widget)
        box.addWidget(self.problem)
        layout.addRow(self.label, self.holder)
        editor.edited.connect(self._on_editor_edited)

    def set_value(self, value: Any) -> None:
        self._quiet = True
        try:
            self.editor.set_value(value)
        finally:
            self._quiet = False
        self._original, self._dirty = value, False

    def edit(self, value: Any) -> None:
        """Show ``value`` as if the user had typed it (``edited`` follows)."""
        self.set_value(value)
        self._dirty = True
        self.edited.emit()

    def value(self) -> Any:
        # Until edited, the value exactly as the spec holds it, whatever its editor would read back from the text.
        return self.editor.value() if self._dirty else self._original

    def set_visible(self, visible: bool) -> None:
        self.layout.setRowVisible(self.holder, visible)

    def show_ignored(self, reason: str | None, *, editable: bool) -> None:
        self.editor.show_ignored(reason, self.label, editable=editable)

    def _on_editor_edited(self) -> None:
        if self._quiet:
            return
        self._dirty = True
        self.edited.emit()


class FitTable(QTableWidget):
    """A table as tall as its rows (the form scrolls, not the table); columns may still scroll sideways."""

    def __init__(self, rows: int, columns: int, parent: QWidget | None = None):
        super().__init__(rows, columns, parent)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.verticalHeader().hide()
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # Tab goes from cell editor to cell editor and on to the form's next field; the view's own Tab moves a
        # current cell nobody sees (the table selects nothing) and keeps the focus inside.
        self.setTabKeyNavigation(False)

    def _height(self) -> int:
        h = 2 * self.frameWidth() + self.horizontalHeader().sizeHint().height()
        h += sum(self.rowHeight(r) for r in range(self.rowCount()))
        if self.horizontalHeader().length() > self.viewport().width():
            h += self.horizontalScrollBar().sizeHint().height()
        return h

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._height())

    def minimumSizeHint(self) -> QSize:
        return QSize(120, self._height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.updateGeometry()


def tab_before(anchor: QWidget, widgets: list[QWidget]) -> None:
    """Put ``widgets`` in the Tab order just before ``anchor`` (a table's Add button): rows made after the form was
    built would otherwise come after its last field, and Tab from a cell would leave the form."""
    chained = set(widgets)
    before = anchor.previousInFocusChain()
    while before is not None and before in chained:
        before = before.previousInFocusChain()
    if before is None:  # not in a window's chain (yet): nothing to join
        return
    for widget in widgets:
        QWidget.setTabOrder(before, widget)
        before = widget


def cell(widget: QWidget, *extra: QWidget) -> QWidget:
    """A cell holder: the view shows and places the holder, so the widget inside can be hidden."""
    holder = QWidget()
    line = QHBoxLayout(holder)
    line.setContentsMargins(0, 0, 0, 0)
    line.setSpacing(0)
    line.addWidget(widget, 1)
    for w in extra:
        line.addWidget(w)
    return holder
