"""The RoPE kernel against an independent float64 complex-number reference, and traced against eager."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neffbench.kernels.rope.ops import RopeModule, build_cos_sin_cache, frequencies, rope_forward

# Tolerances against the float64 reference, by input dtype. The kernel (like vLLM) builds the table
# in float32: an angle pos*inv_freq near 255 rad is rounded to its ulp (2**-16 = 1.5e-5), and that
# absolute angle error times |x| (up to ~5 for these normal inputs) bounds the float32 error. In bfloat16 and float16 the kernel casts
# cos/sin to the input dtype and computes there: each of the two products and the sum rounds at
# 2**-9 (bf16) or 2**-12 (fp16) relative, so a few units of |x| * 2**-8 (bf16) / 2**-11 (fp16).
TOL = {
    torch.float32: dict(atol=1e-4, rtol=1e-5),
    torch.float16: dict(atol=1e-2, rtol=4e-3),
    torch.bfloat16: dict(atol=8e-2, rtol=3e-2),
}


def reference_rope(positions, x, head_size, rotary_dim, inv_freq, neox, position_scale=1.0, mscale=1.0):
    """Rotate pairs as complex numbers z * (mscale * e^{i theta}) in float64: no chunk/stack tricks."""
    pos = positions.numpy().astype(np.float64).reshape(-1)
    arr = x.to(torch.float64).numpy().reshape(len(pos), -1, head_size).copy()
    half = rotary_dim // 2
    theta = np.outer(pos * position_scale, inv_freq)  # [tokens, half]
    rot = mscale * np.exp(1j * theta)[:, None, :]
    if neox:
        idx_a, idx_b = np.arange(half), np.arange(half) + half
    else:
        idx_a, idx_b = np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2)
    z = (arr[..., idx_a] + 1j * arr[..., idx_b]) * rot
    arr[..., idx_a], arr[..., idx_b] = z.real, z.imag
    return arr.reshape(x.shape)


def plain_inv_freq(rotary_dim, base):
    return np.array([base ** (-(2 * i) / rotary_dim) for i in range(rotary_dim // 2)], dtype=np.float64)


CASES = [
    # head_size, rotary_dim, heads_q, heads_k, neox
    pytest.param(64, 64, 32, 8, True, id="seed-neox-gqa"),
    pytest.param(64, 64, 4, 4, False, id="gptj-full"),
    pytest.param(256, 64, 2, 2, False, id="gptj-partial"),
    pytest.param(96, 24, 4, 4, True, id="neox-partial-0.25"),
    pytest.param(80, 32, 4, 1, True, id="phi2-partial-mqa"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("head_size,rotary_dim,hq,hk,neox", CASES)
@pytest.mark.parametrize("with_key", [True, False], ids=["key", "nokey"])
def test_kernel_matches_complex_reference(head_size, rotary_dim, hq, hk, neox, with_key, dtype):
    g = torch.Generator().manual_seed(1)
    max_pos, base, n = 256, 10000.0, 7
    cache = build_cos_sin_cache(rotary_dim, max_pos, base)
    positions = torch.randint(0, max_pos, (n,), generator=g)
    query = torch.randn(n, hq * head_size, generator=g).to(dtype)
    key = torch.randn(n, hk * head_size, generator=g).to(dtype) if with_key else None
    q, k = rope_forward(positions, query, key, cache, head_size, rotary_dim, neox)
    inv = plain_inv_freq(rotary_dim, base)
    assert q.dtype == dtype and q.shape == query.shape
    np.testing.assert_allclose(
        q.double().numpy(), reference_rope(positions, query, head_size, rotary_dim, inv, neox), **TOL[dtype]
    )
    if with_key:
        np.testing.assert_allclose(
            k.double().numpy(), reference_rope(positions, key, head_size, rotary_dim, inv, neox), **TOL[dtype]
        )
    else:
        assert k is None
    # The pass-through tail is bit-identical.
    tail = query.view(n, hq, head_size)[..., rotary_dim:]
    assert torch.equal(q.view(n, hq, head_size)[..., rotary_dim:], tail)


def test_positions_of_any_shape_are_flattened():
    cache = build_cos_sin_cache(8, 16, 10000.0)
    pos = torch.tensor([[1, 2], [3, 4]])
    x = torch.randn(4, 2 * 8)
    a, _ = rope_forward(pos, x, None, cache, 8, 8, True)
    b, _ = rope_forward(pos.flatten(), x, None, cache, 8, 8, True)
    assert torch.equal(a, b)


def test_cache_layout_is_cos_then_sin():
    cache = build_cos_sin_cache(4, 3, 100.0)
    assert cache.shape == (3, 4) and cache.dtype == torch.float32
    inv = [1.0, 0.1]
    for p in range(3):
        expected = [math.cos(p * inv[0]), math.cos(p * inv[1]), math.sin(p * inv[0]), math.sin(p * inv[1])]
        np.testing.assert_allclose(cache[p].numpy(), expected, atol=1e-7)


# ---- scaling variants against hand-computed values --------------------------------------------


def test_linear_scaling_divides_positions():
    plain = build_cos_sin_cache(8, 64, 10000.0)
    scaled = build_cos_sin_cache(8, 64, 10000.0, {"rope_type": "linear", "factor": 4.0})
    # Row 8 with factor 4 is row 2 of the plain table.
    torch.testing.assert_close(scaled[8], plain[2], atol=1e-6, rtol=0)
    torch.testing.assert_close(scaled[::4][:16], plain[:16], atol=1e-6, rtol=0)


def test_dynamic_ntk_stretches_the_base():
    dim, orig, factor, max_pos = 64, 2048, 2.0, 4096
    f = frequencies(
        dim, max_pos, 10000.0, {"rope_type": "dynamic", "factor": factor, "original_max_position_embeddings": orig}
    )
    # base' = 10000 * (2 * 4096 / 2048 - 1) ** (64 / 62) = 10000 * 3 ** 1.0322580... = 31082.2
    ntk_base = 10000.0 * 3.0 ** (64 / 62)
    assert ntk_base == pytest.approx(31_082.2, rel=1e-5)
    np.testing.assert_allclose(f.inv_freq.numpy(), plain_inv_freq(dim, ntk_base), rtol=1e-6)
    assert f.position_scale == 1.0 and f.mscale == 1.0


def test_llama3_scaling_hand_values():
    # rotary_dim 8, theta 500000, Llama-3.1's factor 8 / low 1 / high 4 / original 8192.
    f = frequencies(
        8,
        131072,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    )
    inv = plain_inv_freq(8, 500000.0)  # 1, 0.0376, 0.00141, 5.32e-5; wavelengths 6.3, 167, 4443, 118152
    wavelen2 = 2 * math.pi / inv[2]  # between 2048 and 8192: smoothly interpolated
    smooth = (8192 / wavelen2 - 1) / (4 - 1)
    expected = [inv[0], inv[1], inv[2] * ((1 - smooth) / 8 + smooth), inv[3] / 8]
    assert expected[2] == pytest.approx(5.2486e-4, rel=1e-3)
    np.testing.assert_allclose(f.inv_freq.numpy(), expected, rtol=2e-6)


def test_yarn_scaling_hand_values():
    dim, base, factor, orig = 16, 10000.0, 4.0, 4096
    f = frequencies(
        dim,
        orig * 4,
        base,
        {
            "rope_type": "yarn",
            "factor": factor,
            "original_max_position_embeddings": orig,
            "beta_fast": 32,
            "beta_slow": 1,
        },
    )

    def corr(rot):
        return dim * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(corr(32)), 0), min(math.ceil(corr(1)), dim - 1)
    assert (low, high) == (2, 6)  # 16*ln(4096/(32*2pi))/(2 ln 1e4) = 2.62; for beta 1: 5.63
    inv = plain_inv_freq(dim, base)
    expected = []
    for i in range(dim // 2):
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        expected.append(inv[i] * (1 - ramp) + inv[i] / factor * ramp)
    np.testing.assert_allclose(f.inv_freq.numpy(), expected, rtol=2e-6)
    assert f.mscale == pytest.approx(0.1 * math.log(4) + 1)  # 1.1386...
    cache = build_cos_sin_cache(
        dim, 8, base, {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": orig}
    )
    assert cache[0, 0].item() == pytest.approx(1.1386294, rel=1e-6)  # cos(0) * mscale


def test_yarn_deepseek_mscale_ratio():
    both = frequencies(
        16,
        64,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
    )
    assert both.mscale == pytest.approx(1.0)
    ratio = frequencies(
        16,
        64,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 0.707,
            "mscale_all_dim": 1.0,
        },
    )
    expected = (0.1 * 0.707 * math.log(40) + 1) / (0.1 * math.log(40) + 1)
    assert ratio.mscale == pytest.approx(expected)


def test_scaled_table_rotates_like_reference():
    dim, base = 32, 10000.0
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    f = frequencies(dim, 256, base, scaling)
    cache = build_cos_sin_cache(dim, 256, base, scaling)
    pos = torch.arange(0, 256, 37)
    x = torch.randn(len(pos), 2 * dim)
    q, _ = rope_forward(pos, x, None, cache, dim, dim, True)
    ref = reference_rope(pos, x, dim, dim, f.inv_freq.double().numpy(), True, mscale=f.mscale)
    np.testing.assert_allclose(q.numpy(), ref, atol=5e-5, rtol=1e-5)


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"rope_type": "linear"}, "needs 'factor'"),
        ({"rope_type": "longrope", "factor": 2.0}, "unknown rope_type 'longrope'"),
        ({"rope_type": "linear", "factor": 2.0, "fator": 1}, "unknown rope_scaling keys: fator"),
    ],
)
def test_bad_scaling_dict_says_what_is_wrong(bad, message):
    with pytest.raises(ValueError, match=message):
        build_cos_sin_cache(8, 8, 10000.0, bad)


def test_odd_rotary_dim_is_refused():
    with pytest.raises(ValueError, match="rotary_dim must be even"):
        build_cos_sin_cache(7, 8, 10000.0)


# ---- the traceable module ---------------------------------------------------------------------


@pytest.mark.parametrize("with_key", [True, False])
@pytest.mark.parametrize("as_buffer", [False, True])
def test_traced_module_matches_eager(with_key, as_buffer):
    cache = build_cos_sin_cache(64, 128, 500000.0)
    module = RopeModule(64, 64, True, with_key=with_key, cache=cache if as_buffer else None)
    g = torch.Generator().manual_seed(3)
    args = [torch.randint(0, 128, (5,), generator=g), torch.randn(5, 32 * 64, generator=g)]
    if with_key:
        args.append(torch.randn(5, 8 * 64, generator=g))
    if not as_buffer:
        args.append(cache)
    eager = module(*args)
    traced = torch.jit.trace(module, tuple(args))
    out = traced(*args)
    if with_key:
        assert isinstance(out, tuple) and len(out) == 2
        for a, b in zip(eager, out):
            assert torch.equal(a, b)
    else:
        assert isinstance(out, torch.Tensor), "without a key the module returns the query alone, never None"
        assert torch.equal(eager, out)
    if as_buffer:
        assert "cos_sin_cache" in dict(traced.named_buffers())
