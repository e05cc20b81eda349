"""From spec to module and inputs: shapes, dtypes, positions modes and seeding."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neffbench.kernels.rope.build import build_cache, build_module, example_inputs, io_signature, rope_scaling
from neffbench.presets import load_preset

SEED = load_preset("seed")


def _inputs(**kw):
    return dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, **kw))


def test_seed_inputs_match_the_seed_example():
    positions, query, key, cache = example_inputs(SEED)
    assert positions.shape == (1,) and positions.dtype == torch.int64
    assert query.shape == (1, 32 * 64) and key.shape == (1, 8 * 64)
    assert cache.shape == (128, 64) and cache.dtype == torch.float32
    assert 0 <= int(positions[0]) < 128


@pytest.mark.parametrize("mode,offset,expected", [("range", 0, [0, 1, 2, 3]), ("offset", 5, [5, 6, 7, 8])])
def test_positions_modes(mode, offset, expected):
    positions = example_inputs(_inputs(positions=mode, position_offset=offset, num_tokens=(4,)))[0]
    assert positions.tolist() == expected


def test_random_positions_stay_in_the_table_and_follow_the_seed():
    a = example_inputs(_inputs(num_tokens=(500,), seed=3))
    b = example_inputs(_inputs(num_tokens=(500,), seed=3))
    c = example_inputs(_inputs(num_tokens=(500,), seed=4))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[1], c[1])
    assert int(a[0].max()) < 128 and int(a[0].min()) >= 0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_dtype_applies_to_query_and_key(dtype):
    _, q, k, cache = example_inputs(_inputs(dtype=dtype))
    assert str(q.dtype) == f"torch.{dtype}" and q.dtype == k.dtype
    assert cache.dtype == torch.float32


def test_keyless_buffer_variant_takes_two_inputs_and_returns_one():
    spec = dataclasses.replace(
        SEED,
        model=dataclasses.replace(SEED.model, with_key=False),
        rope=dataclasses.replace(SEED.rope, cache_mode="buffer"),
    )
    args = example_inputs(spec)
    assert len(args) == 2
    out = build_module(spec)(*args)
    assert isinstance(out, torch.Tensor)
    ins, outs = io_signature(spec)
    assert [s.name for s in ins] == ["input0", "input1"] and [s.role for s in outs] == ["query"]


def test_bucket_picks_num_tokens():
    spec = _inputs(num_tokens=(1, 16))
    assert example_inputs(spec, 16)[1].shape[0] == 16
    assert io_signature(spec, 16)[0][1].shape == (16, 2048)


def test_rope_scaling_dict_uses_hugging_face_names():
    spec = load_preset("llama3.1-8b")
    assert rope_scaling(spec) == {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    assert rope_scaling(SEED) is None


def test_cache_dtype_is_applied():
    spec = dataclasses.replace(SEED, rope=dataclasses.replace(SEED.rope, cache_dtype="bfloat16"))
    assert build_cache(spec).dtype == torch.bfloat16
