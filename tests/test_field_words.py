"""The window's words for a spec's keys: form labels and section titles, never ``rope.max_pos:`` or ``[inputs]``."""

from __future__ import annotations

import dataclasses

from neffbench.gui.forms.field_words import in_words, labels, problem_text, worded
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.presets import load_preset
from neffbench.spec import validate


def test_a_problem_away_from_its_field_is_named_by_the_forms_label():
    seed = load_preset("seed")
    bad = dataclasses.replace(seed, rope=dataclasses.replace(seed.rope, max_pos=0))
    (problem,) = [p for p in validate(bad) if p.field == "rope.max_pos"]
    text = problem_text(problem, labels(bad))
    assert text.startswith("Max positions: ") and "rope.max_pos" not in text


def test_the_module_kernels_sections_read_as_its_form_titles_them():
    spec = ModuleCompileSpec(module=ModuleSection(entry="pkg.mod:Model"), inputs={"x": "f32[{seq}]"})
    words = labels(spec)
    messages = [worded(p, words).message for p in validate(spec)]
    assert "Input 'x' uses {seq}, which is not a Buckets axis (axes: none)." in messages
    assert not any("[" in m.replace("f32[", "") for m in messages), messages
    empty = dataclasses.replace(spec, inputs={})
    (no_inputs,) = [worded(p, words).message for p in validate(empty) if p.field == "inputs"]
    assert "forward parameter in Inputs (such as" in no_inputs
    said = in_words("[module.kwargs] would be ignored", words)
    assert said == "Constructor arguments would be ignored"


def test_text_that_only_looks_like_a_key_is_left_alone():
    words = labels(load_preset("seed"))
    assert (
        in_words("see model.py and layers.0.attn, not [nosuch]", words)
        == "see model.py and layers.0.attn, not [nosuch]"
    )
