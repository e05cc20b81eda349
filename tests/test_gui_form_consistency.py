"""Fields the current values make irrelevant: disabled in the form with the reason, marked in spec files.

The core (which fields, why, how a file says so) is plain Python; the form's part drives the window.
"""

from __future__ import annotations

import dataclasses

import pytest

from neffbench.kernels import registry
from neffbench.kernels.api import Kernel
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.presets import load_preset, preset_names
from neffbench.spec import dumps_toml, loads_toml, spec_hash, to_dict, validate
from neffbench.spec.ignored import all_ignored, ignored_fields, inactive_fields
from neffbench.spec.marks import marks

BASE = CompileSpec()


def with_(spec, section: str, **changes):
    return dataclasses.replace(spec, **{section: dataclasses.replace(getattr(spec, section), **changes)})


TRN2 = with_(BASE, "compiler", target="trn2")


# ---- which fields, and why ----


def test_the_kernel_api_default_ignores_nothing():
    assert Kernel().ignored_fields(BASE) == {}
    spec = registry.get("silu_and_mul").default_spec()
    assert registry.get("silu_and_mul").ignored_fields(spec) == {}


def test_rotary_dim_wins_over_the_partial_rotary_factor():
    assert "model.partial_rotary_factor" not in ignored_fields(TRN2)
    spec = with_(TRN2, "model", rotary_dim=32)
    assert ignored_fields(spec) == {"model.partial_rotary_factor": "rotary_dim is set, and it wins over the factor"}


def test_key_heads_mean_nothing_without_a_key():
    assert ignored_fields(with_(TRN2, "model", with_key=False)) == {
        "model.num_heads_k": "with_key is off, so the module takes no key"
    }


@pytest.mark.parametrize("target", ["inf2", "trn1", "trn1n"])
def test_lnc_is_irrelevant_before_trn2_for_every_kernel(target):
    for kernel in registry.available():
        spec = with_(kernel.default_spec(), "compiler", target=target)
        assert ignored_fields(spec)["compiler.lnc"] == (
            f"the target is {target}, and neuronx-cc documents --lnc for trn2/trn3 only"
        )
    assert "compiler.lnc" not in ignored_fields(with_(BASE, "compiler", target="trn3"))


def test_fields_a_choice_hides_stay_inactive_with_their_reason():
    inactive = inactive_fields(TRN2)
    assert inactive["compiler.auto_cast_type"] == 'auto_cast is "none"; only matmult, all use it'
    assert inactive["rope.factor"] == 'rope_type is "default"; only linear, dynamic, llama3, yarn use it'
    assert inactive["inputs.position_offset"] == 'positions is "random"; only offset uses it'
    assert not set(inactive) & set(ignored_fields(TRN2))
    assert "compiler.auto_cast_type" not in inactive_fields(with_(TRN2, "compiler", auto_cast="all"))


# ---- what a spec file says about them ----


def test_an_ignored_value_is_written_as_a_comment_that_says_why():
    spec = with_(with_(TRN2, "model", rotary_dim=32, partial_rotary_factor=0.5), "rope", factor=2.0)
    text = dumps_toml(spec)
    assert "# partial_rotary_factor = 0.5  # ignored: rotary_dim is set, and it wins over the factor" in text
    assert '# factor = 2.0  # ignored: rope_type is "default"; only linear, dynamic, llama3, yarn use it' in text
    back = loads_toml(text)
    assert back.model.partial_rotary_factor == 1.0 and back.rope.factor == 1.0
    assert spec_hash(back) == spec_hash(spec)
    assert validate(back) == validate(spec) == []
    # The comment sits where the value was, and taking the '#' away brings the value back.
    lines = text.splitlines()
    assert lines[lines.index("rotary_dim = 32") + 1].startswith("# partial_rotary_factor")
    restored = loads_toml(text.replace("# partial_rotary_factor = 0.5  # ignored", "partial_rotary_factor = 0.5  #"))
    assert restored.model.partial_rotary_factor == 0.5


def test_a_value_the_hash_still_counts_is_kept_with_a_note():
    spec = with_(BASE, "compiler", lnc=2)  # trn1: passed to neuronx-cc, which documents it for trn2 and later
    text = dumps_toml(spec)
    lines = text.splitlines()
    at = lines.index("lnc = 2")
    assert lines[at - 1] == (
        "# lnc does not apply: the target is trn1, and neuronx-cc documents --lnc for trn2/trn3 "
        "only (kept: the spec hash counts it)"
    )
    assert loads_toml(text) == spec
    keyless = with_(TRN2, "model", with_key=False, num_heads_k=4)
    assert loads_toml(dumps_toml(keyless)) == keyless
    # A value validation blames stays too: saving must not make the problem go away.
    both = with_(TRN2, "model", rotary_dim=16, partial_rotary_factor=0.5)
    assert (
        "# partial_rotary_factor does not apply: rotary_dim is set, and it wins over the factor (kept: "
        "validation reports it)\npartial_rotary_factor = 0.5"
    ) in dumps_toml(both)
    assert loads_toml(dumps_toml(both)) == both


def test_defaults_and_machine_copies_are_written_as_before():
    assert dumps_toml(BASE) == dumps_toml(BASE, mark_ignored=False)
    spec = with_(TRN2, "model", rotary_dim=32, partial_rotary_factor=0.5)
    assert loads_toml(dumps_toml(spec, mark_ignored=False)) == spec
    assert to_dict(spec)["model"]["partial_rotary_factor"] == 0.5  # job.json records what was asked


SPECS = [
    with_(TRN2, "model", rotary_dim=32, partial_rotary_factor=0.5),
    with_(TRN2, "model", rotary_dim=16, partial_rotary_factor=0.5),  # disagreeing: an error, as before
    with_(TRN2, "model", with_key=False, num_heads_k=2),
    with_(with_(TRN2, "rope", rope_type="linear", beta_fast=3.0, low_freq_factor=9.0), "inputs", position_offset=7),
    with_(with_(BASE, "compiler", lnc=2, auto_cast_type="fp16"), "rope", cache_mode="buffer", mscale=2.0),
    *(load_preset(name) for name in preset_names()),
]


@pytest.mark.parametrize("spec", SPECS)
def test_saving_and_loading_never_changes_the_hash_or_the_problems(spec, tmp_path):
    from neffbench.spec import load, save

    back = load(save(spec, tmp_path / "s.toml"))
    assert spec_hash(back) == spec_hash(spec)
    assert [(p.field, p.severity) for p in validate(back)] == [(p.field, p.severity) for p in validate(spec)]
    assert loads_toml(dumps_toml(back)) == back  # a second save changes nothing more


def test_old_files_that_set_an_ignored_field_still_load():
    old = (
        "[model]\nhead_size = 64\nrotary_dim = 32\npartial_rotary_factor = 0.5\n"
        '[rope]\nrope_type = "default"\nfactor = 4.0\n[compiler]\nlnc = 2\n'
    )
    spec = loads_toml(old)
    assert (spec.model.partial_rotary_factor, spec.rope.factor, spec.compiler.lnc) == (0.5, 4.0, 2)
    assert set(all_ignored(spec)) >= {"model.partial_rotary_factor", "rope.factor", "compiler.lnc"}
    assert not [p for p in validate(spec) if p.severity == "error"]


def test_the_seed_hash_is_unchanged_and_no_preset_carries_an_unmarked_ignored_value():
    assert spec_hash(load_preset("seed"))[:8] == "7696da23"
    assert {name: marks(load_preset(name)) for name in preset_names()} == {name: [] for name in preset_names()}


# ---- the form ----


def _state(form, key):
    widget = form.editor(key).widget
    return widget.isEnabled(), widget.toolTip(), form.field_label(key).toolTip()


@pytest.mark.gui
def test_partial_rotary_factor_is_disabled_while_rotary_dim_is_set(form):
    form.set_spec(load_preset("seed"))  # rotary_dim 64
    enabled, tip, label_tip = _state(form, "model.partial_rotary_factor")
    assert not enabled
    assert tip.startswith("Ignored: rotary_dim is set, and it wins over the factor.") and label_tip == tip
    form.editor("model.rotary_dim").set_value(None)  # as the user choosing "unset"
    assert form.spec().model.rotary_dim is None
    enabled, tip, label_tip = _state(form, "model.partial_rotary_factor")
    help_text = form.editor("model.partial_rotary_factor").field.metadata["help"]
    assert enabled and tip == help_text and label_tip == help_text


@pytest.mark.gui
def test_key_heads_are_disabled_without_a_key(form):
    form.set_spec(load_preset("seed"))
    assert form.editor("model.num_heads_k").widget.isEnabled()
    form.editor("model.with_key").widget.setChecked(False)
    assert not form.editor("model.num_heads_k").widget.isEnabled()
    assert form.editor("model.num_heads_k").widget.toolTip().startswith("Ignored: with_key is off")
    form.editor("model.with_key").widget.setChecked(True)
    assert form.editor("model.num_heads_k").widget.isEnabled()


@pytest.mark.gui
def test_lnc_follows_the_target_and_a_value_it_warns_about_stays_editable(form):
    form.set_spec(load_preset("seed"))  # trn2, lnc 2
    target, lnc = form.editor("compiler.target").widget, form.editor("compiler.lnc").widget
    assert lnc.isEnabled()
    target.setCurrentIndex(target.findData("trn1"))
    # lnc 2 on trn1 is warned about: the user must be able to unset it.
    assert lnc.isEnabled() and lnc.toolTip().startswith("Ignored: the target is trn1")
    assert form.problem_label("compiler.lnc").property("severity") == "warning"
    form.editor("compiler.lnc").set_value(None)
    assert form.spec().compiler.lnc is None and not lnc.isEnabled()
    target.setCurrentIndex(target.findData("trn3"))
    assert lnc.isEnabled() and not lnc.toolTip().startswith("Ignored")


@pytest.mark.gui
def test_a_value_validation_blames_stays_editable(form):
    form.set_spec(load_preset("seed"))
    form.set_spec(
        with_(with_(load_preset("seed"), "model", rotary_dim=16, partial_rotary_factor=0.5), "compiler", target="trn2")
    )
    factor = form.editor("model.partial_rotary_factor").widget
    assert "not both" in form.problem_label("model.partial_rotary_factor").text()
    assert factor.isEnabled() and factor.toolTip().startswith("Ignored:")
    factor.setValue(1.0)
    assert not factor.isEnabled()


@pytest.mark.gui
def test_fields_a_choice_hides_are_still_hidden_not_disabled(form):
    form.set_spec(load_preset("seed"))
    cast = form.editor("compiler.auto_cast").widget
    cast_type = form.editor("compiler.auto_cast_type").widget
    assert not cast_type.isVisibleTo(form)
    cast.setCurrentIndex(cast.findData("matmult"))
    assert cast_type.isVisibleTo(form) and cast_type.isEnabled()


@pytest.mark.gui
def test_other_kernels_forms_disable_lnc_before_trn2(form):
    for name in ("rms_norm", "module"):
        spec = registry.get(name).default_spec()  # target trn1
        form.set_spec(spec)
        lnc = form.editor("compiler.lnc").widget
        assert not lnc.isEnabled() and lnc.toolTip().startswith("Ignored: the target is trn1"), name
        form.set_spec(with_(spec, "compiler", target="trn2"))
        assert form.editor("compiler.lnc").widget.isEnabled(), name


@pytest.mark.gui
def test_save_from_the_form_marks_the_ignored_value(window, tmp_path):
    from neffbench.spec import load

    window.apply_preset("llama3-8b")  # rotary_dim unset
    form = window.form
    form.editor("model.partial_rotary_factor").set_value(0.5)
    form.editor("model.rotary_dim").set_value(64)
    assert not form.editor("model.partial_rotary_factor").widget.isEnabled()
    path = window.save_spec(tmp_path / "mine.toml")
    text = path.read_text(encoding="utf-8")
    assert "# partial_rotary_factor = 0.5  # ignored: rotary_dim is set, and it wins over the factor" in text
    assert spec_hash(load(path)) == spec_hash(window.current_spec())
