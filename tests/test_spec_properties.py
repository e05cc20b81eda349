"""Property tests: validation never raises, and every spec it accepts builds inputs and runs the kernel."""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from neffbench.kernels.rope.build import build_module, example_inputs, io_signature
from neffbench.kernels.rope.params import ROPE_TYPES, InputsSpec, ModelSpec, RopeSpec
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.spec import DTYPES, TARGETS, CompilerSpec, errors, validate

small_int = st.integers(min_value=-4, max_value=96)

specs = st.builds(
    CompileSpec,
    name=st.sampled_from(["rope", "x", "", "bad name", "a" * 70]),
    model=st.builds(
        ModelSpec,
        head_size=small_int,
        rotary_dim=st.none() | small_int,
        partial_rotary_factor=st.sampled_from([1.0, 0.5, 0.25, 0.4, 0.0, 1.5, 0.3]),
        num_heads_q=st.integers(-1, 6),
        num_heads_k=st.integers(-1, 6),
        is_neox_style=st.booleans(),
        with_key=st.booleans(),
    ),
    rope=st.builds(
        RopeSpec,
        max_pos=st.integers(-2, 300),
        base=st.sampled_from([10000.0, 0.0, -1.0, 500000.0, 1.5]),
        rope_type=st.sampled_from(ROPE_TYPES),
        factor=st.sampled_from([1.0, 2.0, 8.0, 0.0, 0.5]),
        low_freq_factor=st.sampled_from([1.0, 0.0, 4.0]),
        high_freq_factor=st.sampled_from([4.0, 1.0]),
        original_max_position_embeddings=st.integers(0, 512),
        beta_fast=st.sampled_from([32.0, 1.0]),
        beta_slow=st.sampled_from([1.0, 0.0, 64.0]),
        mscale=st.sampled_from([0.0, 1.0]),
        mscale_all_dim=st.sampled_from([0.0, 1.0]),
        cache_mode=st.sampled_from(["input", "buffer"]),
        cache_dtype=st.sampled_from(DTYPES),
    ),
    inputs=st.builds(
        InputsSpec,
        num_tokens=st.lists(st.integers(-1, 40), max_size=3).map(tuple),
        positions=st.sampled_from(["random", "range", "offset"]),
        position_offset=st.integers(0, 300),
        dtype=st.sampled_from(DTYPES),
        seed=st.integers(0, 10),
    ),
    compiler=st.builds(
        CompilerSpec,
        target=st.sampled_from(TARGETS),
        lnc=st.none() | st.integers(0, 3),
        optlevel=st.integers(0, 4),
        extra_args=st.lists(
            st.sampled_from(["--target", "trn2", "--lnc=2", "-O1", "--verbose", "info", "--logfile", "x"]), max_size=4
        ).map(tuple),
    ),
)


# Plausible specs: what a user might type, most of them valid, so the kernel property gets exercised.
plausible_specs = st.builds(
    CompileSpec,
    model=st.builds(
        ModelSpec,
        head_size=st.sampled_from([8, 16, 64, 80, 96]),
        rotary_dim=st.none() | st.sampled_from([2, 8, 16]),
        partial_rotary_factor=st.sampled_from([1.0, 0.5, 0.25]),
        num_heads_q=st.integers(1, 4),
        num_heads_k=st.integers(1, 4),
        is_neox_style=st.booleans(),
        with_key=st.booleans(),
    ),
    rope=st.builds(
        RopeSpec,
        max_pos=st.integers(1, 300),
        base=st.sampled_from([10000.0, 500000.0, 1.5]),
        rope_type=st.sampled_from(ROPE_TYPES),
        factor=st.sampled_from([1.0, 2.0, 8.0]),
        original_max_position_embeddings=st.integers(1, 512),
        cache_mode=st.sampled_from(["input", "buffer"]),
        cache_dtype=st.sampled_from(DTYPES),
    ),
    inputs=st.builds(
        InputsSpec,
        num_tokens=st.lists(st.integers(1, 9), min_size=1, max_size=2, unique=True).map(tuple),
        positions=st.sampled_from(["random", "range", "offset"]),
        position_offset=st.integers(0, 8),
        dtype=st.sampled_from(DTYPES),
        seed=st.integers(0, 10),
    ),
    compiler=st.builds(CompilerSpec, target=st.sampled_from(TARGETS), lnc=st.none() | st.integers(1, 2)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs | plausible_specs)
def test_validate_never_raises(spec):
    problems = validate(spec)
    assert all(p.severity in ("error", "warning") and p.message for p in problems)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(plausible_specs)
def test_every_valid_spec_builds_and_runs(spec):
    if errors(spec):
        return
    for n in spec.inputs.num_tokens:
        module = build_module(spec)
        args = example_inputs(spec, n)
        ins, outs = io_signature(spec, n)
        assert [tuple(a.shape) for a in args] == [s.shape for s in ins]
        out = module(*args)
        out = out if isinstance(out, tuple) else (out,)
        assert [tuple(o.shape) for o in out] == [s.shape for s in outs]
        assert all(torch.isfinite(o.float()).all() for o in out)


def test_the_strategy_reaches_valid_specs():
    # Guard against a strategy so wild that the property above never runs the kernel.
    spec = find(
        plausible_specs,
        lambda s: not errors(s) and s.rope.rope_type == "yarn" and not s.model.is_neox_style,
        # Only that one exists: generating is enough, shrinking it to the smallest (and explaining it) is not needed.
        settings=settings(max_examples=2000, database=None, phases=[Phase.generate]),
    )
    assert spec.inputs.num_tokens
