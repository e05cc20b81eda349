"""Nothing is clamped: a number typed in the form (or read from a file) stays as it is, and one out of its
field's range is that field's error; only the arrows stop at the range."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt

from neffbench.gui.forms.spec_form import SpecForm
from neffbench.kernels.rope.params import RopeCompileSpec


def _form(qtbot) -> SpecForm:
    form = SpecForm(spec_class=RopeCompileSpec)
    qtbot.addWidget(form)
    form.resize(480, 900)
    form.show()
    qtbot.waitExposed(form)
    return form


def _type(qtbot, widget, text: str) -> None:
    widget.setFocus()
    widget.lineEdit().selectAll()
    qtbot.keyClicks(widget.lineEdit(), text)
    widget.clearFocus()  # focus out: where a spin box used to fix the text up to its range


def test_a_negative_number_stays_negative_and_is_the_fields_error(qtbot):
    form = _form(qtbot)
    box = form.editor("model.num_heads_q").widget
    _type(qtbot, box, "-5")
    assert box.text() == "-5" and form.spec().model.num_heads_q == -5
    label = form.problem_label("model.num_heads_q")
    assert label.isVisible() and "at least 1; got -5" in label.text()


def test_a_too_large_number_stays_and_is_the_fields_error(qtbot):
    form = _form(qtbot)
    box = form.editor("model.head_size").widget
    _type(qtbot, box, "5000")
    assert box.text() == "5000" and form.spec().model.head_size == 5000
    assert "Head size must be at most 1024; got 5000." in form.problem_label("model.head_size").text()
    factor = form.editor("rope.factor").widget
    form.set_spec(dataclasses.replace(form.spec(), rope=dataclasses.replace(form.spec().rope, rope_type="linear")))
    _type(qtbot, factor, "99999")
    assert form.spec().rope.factor == 99999.0
    assert "Factor must be at most 1024; got 99999." in form.problem_label("rope.factor").text()


def test_the_arrows_step_within_the_range_and_down_to_unset(qtbot):
    form = _form(qtbot)
    heads = form.editor("model.num_heads_q").widget
    form.editor("model.num_heads_q").set_value(1023)
    heads.stepBy(5)
    assert heads.value() == 1024 and not heads.stepEnabled() & heads.StepEnabledFlag.StepUpEnabled
    rotary = form.editor("model.rotary_dim")
    rotary.set_value(2)
    rotary.widget.stepBy(-1)
    assert rotary.widget.text() == "" and form.spec().model.rotary_dim is None  # shown as its placeholder, unset
    rotary.widget.stepBy(1)
    assert form.spec().model.rotary_dim == 2
    qtbot.keyClick(heads, Qt.Key.Key_Down)
    assert heads.value() == 1023


def test_values_from_a_file_are_shown_and_kept_exactly(qtbot):
    form = _form(qtbot)
    spec = RopeCompileSpec()
    odd = dataclasses.replace(
        spec,
        model=dataclasses.replace(spec.model, head_size=5000, partial_rotary_factor=0.123456789),
        rope=dataclasses.replace(spec.rope, max_pos=10**12),
    )
    form.set_spec(odd)
    form.editor("name").widget.setText("edited")
    form.editor("name").edited.emit()  # another field's edit collects every widget's value
    kept = form.spec()
    assert kept.model.head_size == 5000 and kept.model.partial_rotary_factor == 0.123456789
    assert kept.rope.max_pos == 10**12  # beyond what a C int holds
    assert form.editor("model.partial_rotary_factor").widget.text() == "0.123456789"
    assert form.editor("rope.max_pos").widget.text() == "1000000000000"
    assert "got 1000000000000." in form.problem_label("rope.max_pos").text()


def test_typed_numbers_are_never_cut_and_the_range_is_said_in_whole_numbers(qtbot):
    form = _form(qtbot)
    positions = form.editor("rope.max_pos").widget
    _type(qtbot, positions, "99999999999")
    assert positions.text() == "99999999999" and form.spec().rope.max_pos == 99999999999
    assert form.problem_label("rope.max_pos").text() == "✖ Max positions must be at most 4194304; got 99999999999."
    base = form.editor("rope.base").widget
    _type(qtbot, base, "1.234567")
    assert base.text() == "1.234567" and form.spec().rope.base == 1.234567
    _type(qtbot, positions, "1e5")  # a key that is no part of a whole number is refused, not the digits before it
    assert positions.text() == "15" and form.spec().rope.max_pos == 15


def test_text_that_is_no_number_yet_is_the_fields_error_and_stays(qtbot):
    form = _form(qtbot)
    heads = form.editor("model.num_heads_q").widget
    _type(qtbot, heads, "-")
    assert heads.text() == "-"
    assert form.problem_label("model.num_heads_q").text() == "✖ '-' is not a whole number."
    assert any(p.field == "model.num_heads_q" for p in form.errors())
    heads.lineEdit().selectAll()
    qtbot.keyClick(heads.lineEdit(), Qt.Key.Key_Backspace)
    assert "Empty: type a whole number." in form.problem_label("model.num_heads_q").text()
