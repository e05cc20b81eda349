"""Preview numbers (no Qt): the table, its cast error, the frequency bands, the rotation and the pair-norm check."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from neffbench.kernels.rope import preview
from neffbench.kernels.rope.build import build_cache, example_inputs
from neffbench.kernels.rope.ops import rope_forward
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.presets import load_preset


def with_rope(spec: CompileSpec, **kw) -> CompileSpec:
    return dataclasses.replace(spec, rope=dataclasses.replace(spec.rope, **kw))


def with_model(spec: CompileSpec, **kw) -> CompileSpec:
    return dataclasses.replace(spec, model=dataclasses.replace(spec.model, **kw))


SEED = load_preset("seed")


def test_the_table_is_the_compiled_one_and_nothing_is_downsampled():
    p = preview.compute(SEED)
    assert p.table.shape == (SEED.rope.max_pos, 64)
    assert torch.equal(torch.from_numpy(p.table), build_cache(SEED))
    assert p.cast_error == 0.0


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_drawn_table_is_the_cast_one_widened_exactly(dtype):
    spec = with_rope(SEED, max_pos=1500, cache_dtype=dtype)
    p = preview.compute(spec)
    cast = build_cache(spec)
    assert cast.dtype == getattr(torch, dtype)
    assert p.table.dtype == np.float32
    assert torch.equal(torch.from_numpy(p.table).to(cast.dtype), cast)
    assert torch.equal(torch.from_numpy(p.table), cast.float())


def test_a_preview_crosses_a_process_without_torch(tmp_path):
    """The warm probe pickles it for the window, which unpickles it before its own torch has loaded."""
    import pickle
    import subprocess
    import sys

    (tmp_path / "p.pickle").write_bytes(pickle.dumps(preview.compute(SEED)))
    code = (
        "import pickle, sys; p = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "rows, _, _ = p.display_rows(0, 100, 10); p.value(3, 4); "
        "print('torch' in sys.modules, rows.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.pickle")], capture_output=True, text=True)
    assert out.stdout.split()[0] == "False", out.stderr


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cast_error_is_the_max_over_the_whole_table(dtype):
    spec = with_rope(SEED, max_pos=5000, cache_dtype=dtype)  # more than one block of rows
    p = preview.compute(spec)
    ref = torch.from_numpy(p.reference)
    diff = (ref.to(getattr(torch, dtype)).float() - ref).abs()
    assert p.cast_error == pytest.approx(float(diff.max()))
    pos, col = p.cast_error_at
    assert float(diff[pos, col]) == pytest.approx(p.cast_error)
    value, exact = p.value(pos, col)
    assert abs(value - exact) == pytest.approx(p.cast_error)


def test_display_rows_downsample_only_the_drawing():
    p = preview.compute(with_rope(SEED, max_pos=10_000))
    rows, first, step = p.display_rows(0, 10_000, 1000)
    assert step == 10 and first == 0 and rows.shape[0] == 1000
    np.testing.assert_array_equal(rows[3], p.table[30])
    rows, first, step = p.display_rows(500, 600, 1000)
    assert step == 1 and rows.shape[0] == 100 and first == 500


def test_rotation_is_rope_forward_on_the_example_inputs():
    p = preview.compute(SEED)
    positions, query, key, cache = example_inputs(SEED)
    q, k = rope_forward(positions, query, key, cache, 64, 64, True)
    np.testing.assert_array_equal(p.rotation.query_out.reshape(q.shape), q.numpy())
    np.testing.assert_array_equal(p.rotation.key_out.reshape(k.shape), k.numpy())
    np.testing.assert_array_equal(p.rotation.positions, positions.numpy())


def test_pair_check_passes_for_both_pairings_and_catches_the_wrong_one():
    for neox in (True, False):
        p = preview.compute(with_model(SEED, is_neox_style=neox))
        assert p.pair_check.passed, p.pair_check
        assert p.pairing()[1] == ((1, 33) if neox else (2, 3))
    # Checking GPT-J output with NeoX pairs is the classic bug: the check must fail.
    gptj = preview.compute(with_model(SEED, is_neox_style=False))
    wrong = preview._pair_check(with_model(SEED, is_neox_style=True), gptj.rotation, 1.0)
    assert not wrong.passed


def test_partial_rotary_tail_passes_through():
    spec = load_preset("gpt-neox-20b")
    p = preview.compute(spec)
    assert p.rotary_dim < p.head_size
    assert p.pair_check.passed and p.pair_check.tail_max_change == 0.0
    np.testing.assert_array_equal(p.rotation.query_out[..., p.rotary_dim :], p.rotation.query[..., p.rotary_dim :])


def test_llama3_bands_and_original_positions_are_reported():
    p = preview.compute(with_rope(load_preset("llama3.1-8b"), max_pos=16384))
    f = p.frequencies
    assert f.original_max_position_embeddings == 8192
    assert set(f.bands) == {"unchanged", "interpolated", "blended"}
    # High frequencies (short wavelengths) are kept, low ones divided by the factor.
    assert f.bands[0] == "unchanged" and f.bands[-1] == "interpolated"
    np.testing.assert_allclose(f.inv_freq[-1] * 8, f.base_inv_freq[-1], rtol=1e-6)
    assert preview.compute(SEED).frequencies.original_max_position_embeddings is None


def test_linear_scaling_interpolates_every_band():
    spec = with_rope(SEED, rope_type="linear", factor=4.0)
    f = preview.compute(spec).frequencies
    assert set(f.bands) == {"interpolated"}


def test_yarn_mscale_is_accounted_for_in_the_pair_check():
    spec = with_rope(SEED, rope_type="yarn", factor=4.0, original_max_position_embeddings=64)
    p = preview.compute(spec)
    assert p.frequencies.mscale > 1
    assert p.pair_check.passed


def test_a_spec_with_errors_is_refused_with_the_reason():
    with pytest.raises(preview.PreviewError, match="even"):
        preview.compute(with_model(SEED, rotary_dim=63))


def test_huge_buckets_are_previewed_with_fewer_tokens_and_say_so(monkeypatch):
    monkeypatch.setattr(preview, "MAX_PREVIEW_ELEMENTS", 64 * 32 * 10)
    spec = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(100,)))
    p = preview.compute(spec)
    assert p.rotation.num_tokens == 10 and p.rotation.bucket == 100 and "10 tokens" in p.rotation.note


def test_the_table_is_reused_when_only_other_fields_change():
    preview.clear_cache()
    spec = with_rope(SEED, max_pos=4096)
    assert "table" in preview.compute(spec).timings
    assert "table_cached" in preview.compute(with_model(spec, num_heads_q=16)).timings


def test_numbers_are_plain_data():
    import json

    numbers = preview.compute(SEED).numbers()
    assert json.loads(json.dumps(numbers))["pair_norm_check"]["passed"] is True
