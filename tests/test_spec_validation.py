"""Every validation rule, with the exact sentence a user reads."""

from __future__ import annotations

import dataclasses

import pytest

from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.spec import Problem, SpecError, loads_toml, validate

BASE = CompileSpec()


def with_(section: str | None = None, **changes) -> CompileSpec:
    if section is None:
        return dataclasses.replace(BASE, **changes)
    return dataclasses.replace(BASE, **{section: dataclasses.replace(getattr(BASE, section), **changes)})


def test_default_spec_is_clean():
    assert validate(BASE) == []


ERRORS = [
    (
        with_("model", rotary_dim=63),
        "model.rotary_dim",
        "Rotary dim must be even (elements are rotated in pairs); got 63.",
    ),
    (with_("model", rotary_dim=128), "model.rotary_dim", "Rotary dim (128) cannot be larger than the head size (64)."),
    (with_("model", rotary_dim=0), "model.rotary_dim", "Rotary dim must be at least 2; got 0."),
    (with_("model", head_size=0, rotary_dim=2), "model.head_size", "Head size must be at least 1; got 0."),
    (with_("model", num_heads_q=0), "model.num_heads_q", "Query heads must be at least 1; got 0."),
    (with_("model", num_heads_k=-2), "model.num_heads_k", "Key heads must be at least 1; got -2."),
    (
        with_("model", partial_rotary_factor=0.0),
        "model.partial_rotary_factor",
        "Partial rotary factor must be above 0 and at most 1; got 0.",
    ),
    (
        with_("model", partial_rotary_factor=1.5),
        "model.partial_rotary_factor",
        "Partial rotary factor must be above 0 and at most 1; got 1.5.",
    ),
    (
        with_("model", head_size=96, partial_rotary_factor=0.3),
        "model.partial_rotary_factor",
        "Head size 96 x partial rotary factor 0.3 = 28.8, which is not an even whole number of at least 2.",
    ),
    (
        with_("model", head_size=50, partial_rotary_factor=0.5),
        "model.partial_rotary_factor",
        "Head size 50 x partial rotary factor 0.5 = 25, which is not an even whole number of at least 2.",
    ),
    (
        with_("model", head_size=64, partial_rotary_factor=0.5, rotary_dim=16),
        "model.partial_rotary_factor",
        "Set rotary dim or partial rotary factor, not both: rotary dim 16 disagrees with 64 x 0.5 = 32.",
    ),
    (with_("inputs", num_tokens=(0,)), "inputs.num_tokens", "Every bucket needs at least 1 token; got 0."),
    (with_("inputs", num_tokens=()), "inputs.num_tokens", "List at least one number of tokens."),
    (with_("inputs", num_tokens=(8, 8)), "inputs.num_tokens", "Bucket 8 is listed twice."),
    (with_("rope", max_pos=0), "rope.max_pos", "Max positions must be at least 1; got 0."),
    (with_("rope", base=0.0), "rope.base", "Base must be greater than 0; got 0."),
    (with_("rope", base=-5.0), "rope.base", "Base must be greater than 0; got -5."),
    (
        with_("inputs", positions="range", num_tokens=(200,)),
        "inputs.num_tokens",
        "Positions 0..199 reach max positions (128): the table has rows 0..127.",
    ),
    (
        dataclasses.replace(
            BASE, inputs=dataclasses.replace(BASE.inputs, positions="offset", position_offset=100, num_tokens=(29,))
        ),
        "inputs.position_offset",
        "Positions 100..128 reach max positions (128): the table has rows 0..127.",
    ),
    (
        with_("rope", rope_type="linear", factor=0.0),
        "rope.factor",
        "Factor must be greater than 0 for linear scaling; got 0.",
    ),
    (
        dataclasses.replace(
            BASE,
            model=dataclasses.replace(BASE.model, rotary_dim=2),
            rope=dataclasses.replace(BASE.rope, rope_type="dynamic", factor=2.0),
        ),
        "rope.rope_type",
        "Dynamic NTK scaling needs a rotary dim above 2: its base is raised to dim / (dim - 2).",
    ),
    (
        with_("rope", rope_type="llama3", high_freq_factor=1.0),
        "rope.high_freq_factor",
        "High-freq factor (1) must be greater than the low-freq factor (1).",
    ),
    (
        with_("rope", rope_type="llama3", low_freq_factor=0.0),
        "rope.low_freq_factor",
        "low_freq_factor must be greater than 0; got 0.",
    ),
    (
        with_("rope", rope_type="dynamic", factor=2.0, original_max_position_embeddings=0),
        "rope.original_max_position_embeddings",
        "Original max positions must be at least 1; got 0.",
    ),
    (
        with_("rope", rope_type="yarn", factor=4.0, beta_fast=1.0, beta_slow=2.0),
        "rope.beta_fast",
        "Beta fast (1) must be greater than beta slow (2).",
    ),
    (
        with_("rope", rope_type="yarn", factor=4.0, beta_slow=0.0),
        "rope.beta_slow",
        "Beta slow must be greater than 0; got 0.",
    ),
    (
        with_("rope", rope_type="ntk"),
        "rope.rope_type",
        "Scaling type must be one of default, linear, dynamic, llama3, yarn; got 'ntk'.",
    ),
    (
        with_("compiler", extra_args=("--target", "inf2")),
        "compiler.extra_args",
        "Extra args set --target inf2 but the target field is trn1; set the target field instead.",
    ),
    (
        with_("compiler", extra_args=("--lnc=2",)),
        "compiler.extra_args",
        "Extra args set --lnc 2 but the lnc field is unset; set the lnc field instead.",
    ),
    (
        with_("compiler", extra_args=("-O3",)),
        "compiler.extra_args",
        "Extra args set --optlevel 3 but the optlevel field is 2; set the optlevel field instead.",
    ),
    (
        with_("compiler", extra_args=("--logfile", "x.txt")),
        "compiler.extra_args",
        "Extra args must not set --logfile: the workbench sets it so that it can find the NEFF and the log.",
    ),
    (with_("compiler", optlevel=4), "compiler.optlevel", "Opt level must be between 1 and 3; got 4."),
    (
        with_("compiler", target="trn9"),
        "compiler.target",
        "Target must be one of inf2, trn1, trn1n, trn2, trn3; got 'trn9'.",
    ),
    (
        with_(name="my job!"),
        "name",
        "Name must be 1-64 letters, digits, '.', '-' or '_', starting with a letter or digit; got 'my job!'.",
    ),
    (with_(workdir="  "), "workdir", "Workdir must be set."),
]


@pytest.mark.parametrize("spec,field,message", ERRORS, ids=[f"{e[1]}-{i}" for i, e in enumerate(ERRORS)])
def test_error_rule(spec, field, message):
    problems = validate(spec)
    assert Problem(field, message, "error") in problems, [str(p) for p in problems]


WARNINGS = [
    (
        with_("compiler", lnc=2),
        "compiler.lnc",
        "neuronx-cc documents --lnc for Trn2 and later only; target trn1 may reject or ignore it.",
    ),
    (
        with_("compiler", auto_cast="matmult"),
        "compiler.auto_cast",
        "--auto-cast matmult to bf16 changes numerics: expect a larger error against the reference.",
    ),
    (
        with_("rope", cache_dtype="bfloat16"),
        "rope.cache_dtype",
        "A bfloat16 cos/sin table loses precision at large positions; float32 is what vLLM computes it in.",
    ),
    (
        dataclasses.replace(
            BASE,
            model=dataclasses.replace(BASE.model, head_size=128),
            rope=dataclasses.replace(BASE.rope, max_pos=131072, cache_mode="buffer"),
        ),
        "rope.max_pos",
        "The cos/sin table (64.0 MiB) is inlined into the NEFF as a constant; pass it as an input to "
        "keep the NEFF small.",
    ),
    (
        with_("model", num_heads_q=30, num_heads_k=8),
        "model.num_heads_k",
        "30 query heads is not a multiple of 8 key heads, which no grouped-query attention model uses.",
    ),
    (
        with_("rope", rope_type="linear", factor=0.5),
        "rope.factor",
        "A factor below 1 (0.5) shrinks the context instead of extending it.",
    ),
    (
        with_("compiler", extra_args=("--target", "trn1")),
        "compiler.extra_args",
        "--target trn1 in extra args repeats the target field.",
    ),
    (
        with_("rope", rope_type="yarn", factor=4.0, mscale=1.0),
        "rope.mscale_all_dim",
        "mscale and mscale_all_dim only take effect together; with one unset the standard 0.1*ln(factor)+1 scale "
        "is used.",
    ),
]


@pytest.mark.parametrize("spec,field,message", WARNINGS, ids=[w[1] for w in WARNINGS])
def test_warning_rule_does_not_block(spec, field, message):
    problems = validate(spec)
    assert Problem(field, message, "warning") in problems, [str(p) for p in problems]
    assert not [p for p in problems if p.severity == "error"]


def test_every_problem_is_reported_at_once_errors_first():
    spec = dataclasses.replace(
        BASE,
        model=dataclasses.replace(BASE.model, rotary_dim=7, num_heads_q=0),
        rope=dataclasses.replace(BASE.rope, base=0.0, cache_dtype="float16"),
    )
    problems = validate(spec)
    fields = [p.field for p in problems]
    assert {"model.rotary_dim", "model.num_heads_q", "rope.base", "rope.cache_dtype"} <= set(fields)
    severities = [p.severity for p in problems]
    assert severities == sorted(severities, key=lambda s: s != "error")


def test_inactive_scaling_fields_are_not_validated():
    # low_freq_factor 0 would be an error for llama3, but means nothing for the default type.
    assert validate(with_("rope", low_freq_factor=0.0, beta_slow=0.0)) == []


def test_values_are_never_clamped():
    spec = with_("model", rotary_dim=4096)
    assert spec.model.rotary_dim == 4096
    assert any(p.field == "model.rotary_dim" for p in validate(spec))


@pytest.mark.parametrize(
    "text,field,message",
    [
        (
            "[model]\nhead_sise = 64\n",
            "model.head_sise",
            "Unknown key 'head_sise' in [model]. Did you mean 'head_size'?",
        ),
        (
            "[model]\nnum_tokens = 4\n",
            "model.num_tokens",
            "Unknown key 'num_tokens' in [model]. It belongs in [inputs].",
        ),
        ("nmae = 'x'\n", "nmae", "Unknown key 'nmae'. Did you mean 'name'?"),
        ("[rope]\nbase = 'big'\n", "rope.base", "must be a number, got 'big'."),
        ("[model]\nhead_size = 6.5\n", "model.head_size", "must be a whole number, got 6.5."),
        ("[model]\nwith_key = 1\n", "model.with_key", "must be true or false, got 1."),
        ("[inputs]\nnum_tokens = [1, 'two']\n", "inputs.num_tokens", "must be a whole number, got 'two'."),
        ("model = 3\n", "model", "'model' must be a table of settings."),
    ],
)
def test_file_problems_name_the_key(text, field, message):
    with pytest.raises(SpecError) as info:
        loads_toml(text)
    assert Problem(field, message) in info.value.problems


def test_all_file_problems_at_once():
    with pytest.raises(SpecError) as info:
        loads_toml("[model]\nhead_sise = 1\nrotary = 2\n[rope]\nbase = 'x'\n")
    assert len(info.value.problems) == 3


def test_bad_toml_syntax_is_one_clear_problem():
    with pytest.raises(SpecError, match="my.toml is not valid TOML"):
        loads_toml("[model\nhead_size = 1", source="my.toml")
