"""The vLLM RoPE forward pass, its cos/sin table builder and the traceable module that binds its scalars.

``rope_forward`` keeps the seed's semantics exactly (vLLM ``RotaryEmbedding.forward_native``); the
table builder follows Hugging Face ``modeling_rope_utils`` and vLLM ``rotary_embedding`` for each
scaling type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

SCALING_KEYS = (
    "rope_type",
    "factor",
    "low_freq_factor",
    "high_freq_factor",
    "original_max_position_embeddings",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
)
TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _apply_rotary_emb(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, is_neox_style: bool) -> torch.Tensor:
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    return torch.stack((o1, o2), dim=-1).flatten(-2)


def _rotate(
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    num_tokens: int,
    head_size: int,
    rotary_dim: int,
    is_neox_style: bool,
) -> torch.Tensor:
    shape = x.shape
    x = x.view(num_tokens, -1, head_size)
    x_rot = _apply_rotary_emb(x[..., :rotary_dim], cos, sin, is_neox_style)
    return torch.cat((x_rot, x[..., rotary_dim:]), dim=-1).reshape(shape)


def rope_forward(
    positions: torch.Tensor,
    query: torch.Tensor,
    key: torch.Tensor | None,
    cos_sin_cache: torch.Tensor,
    head_size: int,
    rotary_dim: int,
    is_neox_style: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Rotate ``query`` (and ``key``) by the cos/sin rows at ``positions``; returns ``(query, key)``.

    query is ``[num_tokens, num_heads * head_size]`` (any shape whose leading dims flatten to
    num_tokens); only the first ``rotary_dim`` elements of each head are rotated.
    """
    positions = positions.flatten()
    num_tokens = positions.shape[0]
    cos_sin = cos_sin_cache.index_select(0, positions)
    cos, sin = cos_sin.chunk(2, dim=-1)
    query = _rotate(query, cos, sin, num_tokens, head_size, rotary_dim, is_neox_style)
    if key is not None:
        key = _rotate(key, cos, sin, num_tokens, head_size, rotary_dim, is_neox_style)
    return query, key


# ---- frequencies and the cos/sin table ---------------------------------------------------------


@dataclass(frozen=True)
class Frequencies:
    """What a scaling type does to the rotation: per-pair inverse frequencies and position/amplitude scales."""

    inv_freq: torch.Tensor  # [rotary_dim // 2], float32
    position_scale: float = 1.0  # positions are multiplied by this (linear interpolation)
    mscale: float = 1.0  # cos and sin are multiplied by this (yarn attention scaling)


def _base_inv_freq(rotary_dim: int, base: float) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim))


def _yarn_correction_dim(num_rotations: float, dim: int, base: float, max_position: int) -> float:
    return (dim * math.log(max_position / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def _scaling(rope_scaling: dict[str, Any], key: str, default: Any = None) -> Any:
    value = rope_scaling.get(key, default)
    if value is None:
        raise ValueError(f"rope_scaling for {rope_scaling.get('rope_type')!r} needs '{key}'")
    return value


def frequencies(rotary_dim: int, max_pos: int, base: float, rope_scaling: dict[str, Any] | None = None) -> Frequencies:
    """Inverse frequencies and scales for ``rope_scaling`` (Hugging Face key names)."""
    scaling = dict(rope_scaling or {})
    unknown = set(scaling) - set(SCALING_KEYS) - {"type"}
    if unknown:
        raise ValueError(f"unknown rope_scaling keys: {', '.join(sorted(unknown))}")
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type == "default":
        return Frequencies(_base_inv_freq(rotary_dim, base))
    factor = float(_scaling(scaling, "factor"))
    if rope_type == "linear":
        return Frequencies(_base_inv_freq(rotary_dim, base), position_scale=1.0 / factor)
    if rope_type == "dynamic":
        # vLLM's DynamicNTKScalingRotaryEmbedding: the table covers original * factor positions and
        # the base is stretched once for that length (HF's formula with seq_len = table length).
        if rotary_dim <= 2:
            raise ValueError("dynamic scaling needs rotary_dim above 2 (its exponent is dim / (dim - 2))")
        original = int(scaling.get("original_max_position_embeddings") or max(1, round(max_pos / factor)))
        seq_len = max(max_pos, original)
        ntk_base = base * ((factor * seq_len / original) - (factor - 1)) ** (rotary_dim / (rotary_dim - 2))
        return Frequencies(_base_inv_freq(rotary_dim, ntk_base))
    if rope_type == "llama3":
        low = float(_scaling(scaling, "low_freq_factor"))
        high = float(_scaling(scaling, "high_freq_factor"))
        old_context_len = float(_scaling(scaling, "original_max_position_embeddings"))
        inv_freq = _base_inv_freq(rotary_dim, base)
        low_freq_wavelen = old_context_len / low
        high_freq_wavelen = old_context_len / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
        return Frequencies(torch.where(is_medium, smoothed, scaled))
    if rope_type == "yarn":
        original = int(_scaling(scaling, "original_max_position_embeddings"))
        beta_fast = float(scaling.get("beta_fast") or 32.0)
        beta_slow = float(scaling.get("beta_slow") or 1.0)
        pos_freqs = base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim)
        extrapolation = 1.0 / pos_freqs
        interpolation = 1.0 / (factor * pos_freqs)
        low = max(math.floor(_yarn_correction_dim(beta_fast, rotary_dim, base, original)), 0)
        high = min(math.ceil(_yarn_correction_dim(beta_slow, rotary_dim, base, original)), rotary_dim - 1)
        if low == high:
            high += 0.001  # avoid a zero-width ramp
        ramp = torch.clamp((torch.arange(rotary_dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extrapolation_mask = 1 - ramp
        inv_freq = interpolation * (1 - extrapolation_mask) + extrapolation * extrapolation_mask
        mscale, mscale_all_dim = scaling.get("mscale"), scaling.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            amplitude = _yarn_get_mscale(factor, mscale) / _yarn_get_mscale(factor, mscale_all_dim)
        else:
            amplitude = _yarn_get_mscale(factor)
        return Frequencies(inv_freq, mscale=amplitude)
    raise ValueError(f"unknown rope_type {rope_type!r}; expected one of default, linear, dynamic, llama3, yarn")


def build_cos_sin_cache(
    rotary_dim: int, max_pos: int, base: float, rope_scaling: dict[str, Any] | None = None
) -> torch.Tensor:
    """The float32 ``[max_pos, rotary_dim]`` table ``cat(cos, sin)`` that ``rope_forward`` indexes."""
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"rotary_dim must be even and at least 2, got {rotary_dim}")
    freqs = frequencies(rotary_dim, max_pos, base, rope_scaling)
    t = torch.arange(max_pos, dtype=torch.float32) * freqs.position_scale
    angles = torch.outer(t, freqs.inv_freq)
    # cos and sin are written straight into the two halves: for a 131072-row table a cat() of
    # separate results costs a third of the build, and the values are bit-identical.
    table = torch.empty(max_pos, rotary_dim, dtype=torch.float32)
    half = rotary_dim // 2
    torch.cos(angles, out=table[:, :half])
    torch.sin(angles, out=table[:, half:])
    if freqs.mscale != 1.0:
        table.mul_(freqs.mscale)
    return table


# ---- the traceable module ---------------------------------------------------------------------


class RopeModule(nn.Module):
    """Binds head_size, rotary_dim and the pairing style so that only tensors cross the trace boundary.

    With ``with_key=False`` it takes no key and returns the rotated query alone, because a ``None``
    output cannot be traced. With a ``cache`` tensor the table is a buffer (inlined into the NEFF);
    without one the table is the last input, as in vLLM.
    """

    cos_sin_cache: torch.Tensor  # the buffer, when there is one (cache_is_buffer)

    def __init__(
        self,
        head_size: int,
        rotary_dim: int,
        is_neox_style: bool,
        with_key: bool = True,
        cache: torch.Tensor | None = None,
    ):
        super().__init__()
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.is_neox_style = is_neox_style
        self.with_key = with_key
        self.cache_is_buffer = cache is not None
        if cache is not None:
            self.register_buffer("cos_sin_cache", cache, persistent=True)

    def forward(self, positions: torch.Tensor, query: torch.Tensor, *rest: torch.Tensor):
        key = rest[0] if self.with_key else None
        cache = self.cos_sin_cache if self.cache_is_buffer else rest[-1]
        q, k = rope_forward(positions, query, key, cache, self.head_size, self.rotary_dim, self.is_neox_style)
        return (q, k) if self.with_key else q

    def extra_repr(self) -> str:
        return (
            f"head_size={self.head_size}, rotary_dim={self.rotary_dim}, is_neox_style={self.is_neox_style}, "
            f"with_key={self.with_key}, cache={'buffer' if self.cache_is_buffer else 'input'}"
        )
