"""The spec form: generated from field metadata, validation beside each field as the user types, presets, save."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit

from neffbench.gui.forms.field_editors import NumberBox
from neffbench.kernels.rope.params import SECTIONS
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.presets import load_preset
from neffbench.spec import fields_of, load, top_fields_of

pytestmark = pytest.mark.gui


def _keys():
    yield from (f.name for f in top_fields_of(CompileSpec) if f.name != "workdir")
    for section in SECTIONS:
        for f in fields_of(CompileSpec, section):
            yield f"{section}.{f.name}"


def _field(key: str) -> dataclasses.Field:
    section, _, name = key.rpartition(".")
    fields = fields_of(CompileSpec, section) if section else top_fields_of(CompileSpec)
    return next(f for f in fields if f.name == name)


def test_every_field_gets_an_editor_from_its_metadata(form):
    for key in _keys():
        f = _field(key)
        widget = form.editor(key).widget
        meta = f.metadata
        # A field the other values make irrelevant says why first (tests/test_gui_form_consistency.py).
        assert widget.toolTip().endswith(meta["help"]), key
        if meta["choices"]:
            assert isinstance(widget, QComboBox), key
            assert [widget.itemData(i) for i in range(widget.count())] == list(meta["choices"])
            labels = meta.get("choice_labels") or {}
            assert [widget.itemText(i) for i in range(widget.count())] == [labels.get(c, c) for c in meta["choices"]]
        elif isinstance(widget, NumberBox):
            # The arrows step within the field's range; what is typed is never clamped (test_gui_form_clamping.py).
            if meta["max"] is not None:
                assert widget.field_max == meta["max"], key
            if meta["min"] is not None:
                assert widget.field_min == meta["min"], key
        else:
            assert isinstance(widget, (QCheckBox, QLineEdit)), key


def test_scaling_fields_appear_with_their_rope_type(form, qtbot):
    combo = form.editor("rope.rope_type").widget
    factor = form.editor("rope.factor").widget
    low = form.editor("rope.low_freq_factor").widget
    combo.setCurrentText("default")
    assert not factor.isVisibleTo(form) and not low.isVisibleTo(form)
    combo.setCurrentText("linear")
    assert factor.isVisibleTo(form) and not low.isVisibleTo(form)
    combo.setCurrentText("llama3")
    assert factor.isVisibleTo(form) and low.isVisibleTo(form)
    assert form.spec().rope.rope_type == "llama3"


def test_preset_then_error_disables_compile_and_fixing_it_enables_it(window, qtbot):
    window.apply_preset("seed")
    assert window.form.spec() == dataclasses.replace(load_preset("seed"))
    assert window.compile_action.isEnabled()
    rotary = window.form.editor("model.rotary_dim").widget
    rotary.setFocus()
    rotary.selectAll()
    qtbot.keyClicks(rotary, "63")  # typed, as a user would
    assert window.form.spec().model.rotary_dim == 63
    label = window.form.problem_label("model.rotary_dim")
    assert label.isVisibleTo(window) and "even" in label.text()
    assert not window.compile_action.isEnabled()
    tip = window.compile_button.toolTip()
    assert "• Rotary dim: " in tip and "even" in tip and "model.rotary_dim" not in tip  # the form's label, not the key
    rotary.selectAll()
    qtbot.keyClicks(rotary, "32")
    assert not label.isVisibleTo(window)
    assert window.compile_action.isEnabled()
    # Editing after a preset is allowed and sticks.
    assert window.form.spec().model.rotary_dim == 32


def test_warnings_show_but_do_not_block(window):
    window.apply_preset("seed")
    window.form.editor("rope.cache_dtype").widget.setCurrentText("bfloat16")
    label = window.form.problem_label("rope.cache_dtype")
    assert label.isVisibleTo(window) and label.property("severity") == "warning"
    assert window.compile_action.isEnabled()


def test_buckets_field_parses_lists_and_reports_typos(window, qtbot):
    edit = window.form.editor("inputs.num_tokens").widget
    edit.clear()
    qtbot.keyClicks(edit, "1, 8 128")
    assert window.form.spec().inputs.num_tokens == (1, 8, 128)
    qtbot.keyClicks(edit, ", x")
    label = window.form.problem_label("inputs.num_tokens")
    assert "'x' is not a whole number" in label.text()
    assert not window.compile_action.isEnabled()
    edit.clear()
    qtbot.keyClicks(edit, "4, 4")
    assert "listed twice" in label.text()


def test_optional_fields_have_an_unset_value(window):
    window.apply_preset("llama3.1-8b")
    assert window.form.spec().model.rotary_dim is None
    box = window.form.editor("model.rotary_dim").widget
    assert box.text() == "" and box.lineEdit().placeholderText() == "unset"
    assert window.form.spec().compiler.lnc is None


def test_save_spec_writes_the_toml_the_cli_reads(window, tmp_path, capsys):
    from neffbench.cli.main import main

    window.apply_preset("llama3.1-8b")
    window.form.editor("compiler.optlevel").widget.setValue(3)
    path = window.save_spec(tmp_path / "mine.toml")
    spec = load(path)
    assert spec == window.current_spec()
    assert spec.compiler.optlevel == 3 and spec.workdir == str(window.workdir)
    assert main(["check", str(path)]) == 0
    # And opening it again gives the same form.
    window.apply_preset("seed")
    assert window.open_spec(path)
    assert window.form.spec() == dataclasses.replace(spec, workdir=window.form.spec().workdir)


def test_labels_are_buddies_and_tab_moves_through_the_form(window, qtbot):
    name = window.form.editor("name").widget
    name.setFocus()
    qtbot.waitUntil(name.hasFocus)
    qtbot.keyClick(name, Qt.Key.Key_Tab)
    assert window.focusWidget() is not name
    assert window.focusWidget() is not None


def test_field_editors_cover_every_type():
    hints = typing.get_type_hints
    from neffbench.gui.forms.field_editors import editor_for
    from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec

    for section, cls in [("", CompileSpec), *SECTIONS.items()]:
        h = hints(cls)
        fields = top_fields_of(CompileSpec) if not section else fields_of(CompileSpec, section)
        for f in fields:
            assert editor_for(f, h[f.name]) is not None
