"""The rows of the module form's constructor arguments: a generated field for each factory parameter, a TOML row
(name and value) for any other."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QToolButton, QVBoxLayout, QWidget

from neffbench.gui.forms.field_editors import BoolEditor, ChoiceEditor, FieldEditor, IntEditor, TextEditor
from neffbench.gui.forms.problem_lines import problem_label
from neffbench.kernels.module.gui.parts import TOML_EXAMPLES, FloatTextEditor, TomlEditor, format_toml, meta_field
from neffbench.kernels.module.gui.report import signature_text
from neffbench.schema.fields import range_problems
from neffbench.spec import Problem

UNSET = object()  # a parameter the user has not set: left out of module.kwargs
BOUNDLESS = ("*args", "**kwargs")


def _required_hint(annotation: str | None) -> str:
    """What a required argument the form cannot generate looks like in TOML (a config: a nested entry)."""
    name = (annotation or "").rpartition(".")[2]
    if name.isidentifier() and name[0].isupper():
        return f'required, such as {{ entry = "package:{name}", kwargs = {{ … }} }}'
    return "required: a TOML value"


def _fits(widget: str, p: dict[str, Any], value: Any) -> bool:
    """Whether the generated widget can show ``value`` exactly (else the parameter gets a TOML row)."""
    if widget == "bool":
        return isinstance(value, bool)
    if widget == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if widget == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if widget == "str":
        return isinstance(value, str)
    if widget == "choices":
        return value in p.get("choices", ())
    return True


class SignatureRow(QObject):
    """One factory parameter: its widget, a Default button, and a problem line. Unset until the user sets it."""

    edited = Signal()

    def __init__(self, p: dict[str, Any], value: Any, layout: QFormLayout):
        super().__init__()
        self.name, self.param = p["name"], p
        self.key = f"module.kwargs.{self.name}"
        widget = p.get("widget", "other")
        if widget not in ("bool", "int", "float", "str", "choices") or (
            value is not UNSET and not _fits(widget, p, value)
        ):
            widget = "other"
        has_default = p.get("has_default", False)
        self.default = p.get("default") if has_default and _fits(widget, p, p.get("default")) else UNSET
        self.widget_kind = widget
        self.editor = self._make_editor(widget, p)
        self.editor.widget.setObjectName(f"kwargs.{self.name}")
        self.reset = QToolButton(text="Default")  # type: ignore[call-arg]  # a Qt property keyword
        self.reset.setObjectName(f"kwargs.{self.name}.default")
        self.reset.setToolTip("Use the parameter's default: leave it out of module.kwargs.")
        self.label = QLabel(self.name)
        self.label.setToolTip(self.editor.widget.toolTip())
        self.label.setBuddy(self.editor.widget)
        self.problem = problem_label(self.key)
        holder = QWidget()
        box = QVBoxLayout(holder)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(1)
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.editor.widget, 1)
        line.addWidget(self.reset)
        box.addLayout(line)
        box.addWidget(self.problem)
        layout.addRow(self.label, holder)
        # Added to a visible form, Qt would show them from a queued call: show them now, already parented.
        self.label.show()
        holder.show()
        self._quiet = False
        self._original, self._clean = value, True
        self._show(value)
        self.editor.edited.connect(self._on_editor_edited)
        self.reset.clicked.connect(self._on_reset_clicked)

    def _make_editor(self, widget: str, p: dict[str, Any]) -> FieldEditor:
        tip = signature_text(p) + "\nNot set, the default is used and the name stays out of module.kwargs."
        bounds = {k: p[k] for k in ("min", "max") if k in p}
        shows_default = p.get("has_default") and _fits(widget, p, p.get("default")) and p.get("default") is not None
        empty = f"default ({p['default']!r})" if p.get("has_default") else "required"
        editor: IntEditor | ChoiceEditor | FloatTextEditor | TextEditor | TomlEditor
        if widget == "bool":
            return BoolEditor(meta_field(self.name, tip))
        if widget == "int":
            editor = IntEditor(meta_field(self.name, tip, optional=not shows_default, **bounds))
            editor.widget.setPlaceholderText(empty)
            return editor
        if widget == "choices":
            self._choices = list(p.get("choices") or ())
            labels = [str(c) for c in self._choices]
            self._placeholder = not shows_default
            editor = ChoiceEditor(
                meta_field(self.name, tip, choices=tuple(([f"({empty})"] if self._placeholder else []) + labels))
            )
            return editor
        if widget == "float":
            editor = FloatTextEditor(meta_field(self.name, tip, **bounds))
        elif widget == "str":
            editor = TextEditor(meta_field(self.name, tip))
        else:
            editor = TomlEditor(meta_field(self.name, tip + f"\nA TOML value: {TOML_EXAMPLES}."))
            empty = f"default: {p['default']}" if p.get("has_default") else _required_hint(p.get("annotation"))
        editor.widget.setPlaceholderText(empty)
        return editor

    def _show(self, value: Any) -> None:
        self.is_set = value is not UNSET
        shown = value if self.is_set else self.default
        self._quiet = True
        try:
            if self.widget_kind == "choices":
                assert isinstance(self.editor, ChoiceEditor)  # made for that kind
                index = self._choices.index(shown) if shown is not UNSET else -1
                self.editor.widget.setCurrentIndex(index + 1 if self._placeholder else max(index, 0))
            elif self.widget_kind == "bool":
                self.editor.set_value(bool(shown) if shown is not UNSET else False)
            elif self.widget_kind == "str":
                self.editor.set_value("" if shown is UNSET or shown is None else shown)
            else:
                self.editor.set_value(None if shown is UNSET or shown is None else shown)
        finally:
            self._quiet = False
        self._set_marked()

    def _set_marked(self) -> None:
        font = QFont(self.label.font())
        font.setBold(self.is_set)
        self.label.setFont(font)
        self.reset.setEnabled(self.is_set)

    def _read(self) -> Any:
        """What the widget shows, or UNSET when it shows its empty state ("required", no text)."""
        if self.widget_kind == "choices":
            assert isinstance(self.editor, ChoiceEditor)  # made for that kind
            index = self.editor.widget.currentIndex() - (1 if self._placeholder else 0)
            return self._choices[index] if 0 <= index < len(self._choices) else UNSET
        value = self.editor.value()
        if value is None or (self.widget_kind == "str" and value == "" and self.default is UNSET):
            return UNSET
        return value

    def value(self) -> Any:
        """The value to write into module.kwargs, or UNSET. Until edited, the spec's own value (exact)."""
        if self._clean:
            return self._original
        return self._read() if self.is_set else UNSET

    def problems(self) -> list[Problem]:
        if not self._clean:
            self._read()
        if self.editor.parse_error:
            return [Problem(self.key, self.editor.parse_error)]
        value = self.value()
        if self.widget_kind == "int" and value is not UNSET:
            return range_problems(self.key, self.editor.field.metadata, value)  # typed as it is, out of range or not
        return []

    def _on_editor_edited(self) -> None:
        if self._quiet:
            return
        self._clean = False
        self.is_set = self._read() is not UNSET or bool(self.editor.parse_error)
        self._set_marked()
        self.edited.emit()

    def _on_reset_clicked(self) -> None:
        self._clean = False
        self._show(UNSET)
        self.edited.emit()


class TomlRow(QObject):
    """An argument the signature does not list (or every argument, before a Resolve): a name and a TOML value."""

    edited = Signal()
    removed = Signal(object)

    def __init__(self, name: str, value: Any, box: QVBoxLayout):
        super().__init__()
        self.widget = QWidget()
        layout = QVBoxLayout(self.widget)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        self.name_edit = QLineEdit(name)
        self.name_edit.setPlaceholderText("name")
        self.name_edit.setMaximumWidth(180)
        self.editor = TomlEditor(meta_field(name or "argument", f"A TOML value: {TOML_EXAMPLES}."))
        self.editor.widget.setPlaceholderText(TOML_EXAMPLES)
        self.remove = QToolButton(text="✕")  # type: ignore[call-arg]  # a Qt property keyword
        self.remove.setToolTip("Remove this argument")
        line.addWidget(self.name_edit)
        line.addWidget(QLabel("="))
        line.addWidget(self.editor.widget, 1)
        line.addWidget(self.remove)
        layout.addLayout(line)
        self.problem = problem_label(f"module.kwargs.{name}")
        layout.addWidget(self.problem)
        box.addWidget(self.widget)
        self.widget.show()  # parented by now: shown with the form, not from a queued call
        self._original, self._dirty = value, False
        if value is not UNSET:
            self.editor.set_value(value)
        self._rename()
        self.name_edit.textEdited.connect(self._on_name_edit_text_edited)
        self.editor.edited.connect(self._on_editor_edited)
        self.remove.clicked.connect(self._on_remove_clicked)

    @property
    def name(self) -> str:
        return self.name_edit.text().strip()

    def _rename(self) -> None:
        self.name_edit.setObjectName(f"kwargs.{self.name}.name")
        self.editor.widget.setObjectName(f"kwargs.{self.name}")
        self.problem.setObjectName(f"problem:module.kwargs.{self.name}")

    def value(self) -> Any:
        if not self._dirty:
            return self._original
        value = self.editor.value()
        return UNSET if value is None else value

    def problems(self) -> list[Problem]:
        key = f"module.kwargs.{self.name}"
        value = self.value()
        if self.editor.parse_error:
            return [Problem(key, self.editor.parse_error)]
        if value is not UNSET and not self.name:
            return [Problem("module.kwargs", f"The argument = {format_toml(value)} has no name.")]
        if self.name and not self.name.isidentifier():
            return [Problem(key, f"'{self.name}' is not a parameter name (letters, digits, '_').")]
        return []

    def _on_name_edit_text_edited(self) -> None:
        self._rename()
        self.edited.emit()

    def _on_editor_edited(self) -> None:
        self._dirty = True
        self.edited.emit()

    def _on_remove_clicked(self) -> None:
        self.removed.emit(self)
