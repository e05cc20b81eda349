"""The form's type map: each field type has one editor, a type without one is refused by name, and one can be added."""

from __future__ import annotations

import dataclasses
import datetime
import re
import typing

import pytest

from neffbench.gui.forms import field_editors
from neffbench.gui.forms.field_editors import TextEditor, UnknownFieldType, editor_for, register_editor
from neffbench.schema.fields import ui

pytestmark = pytest.mark.gui


@dataclasses.dataclass(frozen=True)
class _Odd:
    when: datetime.date | None = dataclasses.field(default=None, metadata=ui("When", "A date.", optional=True))
    where: dict[str, str] = dataclasses.field(default_factory=dict, metadata=ui("Where", "A map."))


def _field(name: str) -> tuple[dataclasses.Field, typing.Any]:
    return next(f for f in dataclasses.fields(_Odd) if f.name == name), typing.get_type_hints(_Odd)[name]


@pytest.mark.parametrize(("name", "type_text"), [("when", "datetime.date | None"), ("where", "dict[str, str]")])
def test_a_type_without_an_editor_is_refused_naming_the_field_and_the_type(qtbot, name, type_text):
    with pytest.raises(UnknownFieldType, match=rf"'{name}' of type {re.escape(type_text)}"):
        editor_for(*_field(name))


def test_a_registered_editor_edits_fields_of_its_type(qtbot, monkeypatch):
    monkeypatch.setattr(field_editors, "_TYPE_MAP", dict(field_editors._TYPE_MAP))
    made = []

    def date_editor(field: dataclasses.Field) -> TextEditor:
        made.append(field.name)
        return TextEditor(field)

    register_editor(datetime.date, date_editor)
    editor = editor_for(*_field("when"))
    qtbot.addWidget(editor.widget)
    assert made == ["when"] and isinstance(editor, TextEditor)
