"""Spec files round-trip exactly, and the hash follows what can change the NEFF and nothing else."""

from __future__ import annotations

import dataclasses

import pytest

from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.presets import load_preset, preset_names
from neffbench.spec import dumps_json, dumps_toml, from_dict, load, loads_json, loads_toml, save, spec_hash, to_dict

SPEC = CompileSpec(
    name="round-trip",
    model=dataclasses.replace(CompileSpec().model, head_size=96, partial_rotary_factor=0.25, is_neox_style=False),
    rope=dataclasses.replace(CompileSpec().rope, rope_type="yarn", factor=4.0, mscale=0.707, base=123456.5),
    inputs=dataclasses.replace(CompileSpec().inputs, num_tokens=(1, 16, 128), positions="offset", position_offset=3),
    compiler=dataclasses.replace(
        CompileSpec().compiler, lnc=2, target="trn2", extra_args=("--verbose", "info"), timeout=600.0
    ),
)


@pytest.mark.parametrize(
    "spec", [CompileSpec(), SPEC, *[load_preset(n) for n in preset_names()]], ids=["default", "custom", *preset_names()]
)
def test_toml_and_json_round_trip_exactly(spec, tmp_path):
    assert loads_toml(dumps_toml(spec)) == spec
    assert loads_json(dumps_json(spec)) == spec
    assert from_dict(to_dict(spec)) == spec
    assert load(save(spec, tmp_path / "s.toml")) == spec
    assert load(save(spec, tmp_path / "s.json")) == spec


def test_save_is_atomic_and_leaves_no_temp_file(tmp_path):
    save(SPEC, tmp_path / "a.toml")
    assert [p.name for p in tmp_path.iterdir()] == ["a.toml"]


def test_missing_file_is_a_clear_problem(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load(tmp_path / "nope.toml")


def _replace(spec, section, **kw):
    return dataclasses.replace(spec, **{section: dataclasses.replace(getattr(spec, section), **kw)})


BUFFER = _replace(CompileSpec(), "rope", cache_mode="buffer")


@pytest.mark.parametrize(
    "section,change",
    [
        ("model", {"head_size": 128}),
        ("model", {"rotary_dim": 32}),
        ("model", {"num_heads_q": 16}),
        ("model", {"num_heads_k": 4}),
        ("model", {"is_neox_style": False}),
        ("model", {"with_key": False}),
        ("rope", {"max_pos": 256}),
        ("rope", {"base": 500000.0}),
        ("rope", {"rope_type": "linear", "factor": 2.0}),
        ("rope", {"cache_dtype": "bfloat16"}),
        ("rope", {"cache_mode": "input"}),
        ("inputs", {"num_tokens": (2,)}),
        ("inputs", {"dtype": "bfloat16"}),
        ("compiler", {"target": "trn2"}),
        ("compiler", {"lnc": 1}),
        ("compiler", {"optlevel": 3}),
        ("compiler", {"auto_cast": "all"}),
        ("compiler", {"model_type": "transformer"}),
        ("compiler", {"fast_loading": True}),
        ("compiler", {"extra_args": ("--verbose", "info")}),
    ],
)
def test_hash_changes_with_what_shapes_the_neff(section, change):
    assert spec_hash(_replace(BUFFER, section, **change)) != spec_hash(BUFFER)


@pytest.mark.parametrize(
    "section,change",
    [
        (None, {"name": "other"}),
        (None, {"workdir": "/elsewhere"}),
        (None, {"description": "notes"}),
        ("inputs", {"seed": 7}),
        ("inputs", {"positions": "range"}),
        ("inputs", {"positions": "offset", "position_offset": 4}),
        ("compiler", {"cpu_backend": "on"}),
        ("compiler", {"timeout": 30.0}),
        # Fields the chosen rope_type does not use:
        ("rope", {"low_freq_factor": 2.0}),
        ("rope", {"beta_fast": 64.0}),
        ("rope", {"factor": 3.0}),
        # Two spellings of the same rotary dim:
        ("model", {"rotary_dim": 64}),
        # auto_cast_type is only read when auto_cast is on:
        ("compiler", {"auto_cast_type": "fp16"}),
    ],
)
def test_hash_ignores_what_does_not(section, change):
    changed = dataclasses.replace(BUFFER, **change) if section is None else _replace(BUFFER, section, **change)
    assert spec_hash(changed) == spec_hash(BUFFER)


def test_table_values_do_not_shape_the_neff_when_the_table_is_an_input():
    as_input = CompileSpec()
    assert spec_hash(_replace(as_input, "rope", base=500000.0)) == spec_hash(as_input)
    assert spec_hash(_replace(as_input, "rope", max_pos=256)) != spec_hash(as_input)


def test_hash_is_stable_across_runs():
    # Pinned: a change here means every job directory name changes; bump deliberately.
    assert spec_hash(CompileSpec()) == spec_hash(loads_toml(dumps_toml(CompileSpec())))
    assert len(spec_hash(CompileSpec())) == 64
