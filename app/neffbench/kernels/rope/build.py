"""From a spec to what gets traced: the cos/sin table, the module, seeded example inputs and their signature."""

from __future__ import annotations

from typing import Any

import torch

from neffbench.kernels.api import TensorSig
from neffbench.kernels.rope.ops import TORCH_DTYPES, RopeModule, build_cos_sin_cache
from neffbench.kernels.rope.params import ROPE_TYPE_REVEALS
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec


def rope_scaling(spec: CompileSpec) -> dict[str, Any] | None:
    """The spec's scaling as the Hugging Face ``rope_scaling`` dict (None for default)."""
    r = spec.rope
    if r.rope_type == "default":
        return None
    out: dict[str, Any] = {"rope_type": r.rope_type}
    for name in ROPE_TYPE_REVEALS[r.rope_type]:
        value = getattr(r, name)
        if name in ("mscale", "mscale_all_dim") and not value:
            continue  # 0 means unset
        out[name] = value
    return out


def build_cache(spec: CompileSpec) -> torch.Tensor:
    """The cos/sin table in the spec's cache dtype."""
    table = build_cos_sin_cache(spec.model.effective_rotary_dim, spec.rope.max_pos, spec.rope.base, rope_scaling(spec))
    return table.to(TORCH_DTYPES[spec.rope.cache_dtype])


def build_module(spec: CompileSpec, cache: torch.Tensor | None = None) -> RopeModule:
    """The traceable module for a spec; with ``cache_mode = "buffer"`` it holds the table."""
    m = spec.model
    if spec.rope.cache_mode == "buffer" and cache is None:
        cache = build_cache(spec)
    return RopeModule(
        m.head_size,
        m.effective_rotary_dim,
        m.is_neox_style,
        with_key=m.with_key,
        cache=cache if spec.rope.cache_mode == "buffer" else None,
    )


def make_positions(spec: CompileSpec, num_tokens: int, generator: torch.Generator) -> torch.Tensor:
    i = spec.inputs
    if i.positions == "range":
        return torch.arange(num_tokens, dtype=torch.int64)
    if i.positions == "offset":
        return torch.arange(i.position_offset, i.position_offset + num_tokens, dtype=torch.int64)
    return torch.randint(0, spec.rope.max_pos, (num_tokens,), generator=generator, dtype=torch.int64)


def example_inputs(spec: CompileSpec, num_tokens: int | None = None) -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the module's argument order: positions, query, [key], [cos_sin_cache].

    ``num_tokens`` picks a bucket; the default is the spec's first.
    """
    n = spec.inputs.num_tokens[0] if num_tokens is None else num_tokens
    m = spec.model
    dtype = TORCH_DTYPES[spec.inputs.dtype]
    generator = torch.Generator().manual_seed(spec.inputs.seed)
    positions = make_positions(spec, n, generator)
    query = torch.randn(n, m.num_heads_q * m.head_size, generator=generator, dtype=torch.float32).to(dtype)
    out = [positions, query]
    if m.with_key:
        out.append(torch.randn(n, m.num_heads_k * m.head_size, generator=generator, dtype=torch.float32).to(dtype))
    if spec.rope.cache_mode == "input":
        out.append(build_cache(spec))
    return tuple(out)


def io_signature(spec: CompileSpec, num_tokens: int | None = None) -> tuple[list[TensorSig], list[TensorSig]]:
    """What the traced module takes and returns, without building any tensor."""
    n = spec.inputs.num_tokens[0] if num_tokens is None else num_tokens
    m = spec.model
    dt = spec.inputs.dtype
    ins = [("positions", "int64", (n,)), ("query", dt, (n, m.num_heads_q * m.head_size))]
    outs = [("query", dt, (n, m.num_heads_q * m.head_size))]
    if m.with_key:
        ins.append(("key", dt, (n, m.num_heads_k * m.head_size)))
        outs.append(("key", dt, (n, m.num_heads_k * m.head_size)))
    if spec.rope.cache_mode == "input":
        ins.append(("cos_sin_cache", spec.rope.cache_dtype, (spec.rope.max_pos, m.effective_rotary_dim)))
    return (
        [TensorSig(f"input{i}", *t) for i, t in enumerate(ins)],
        [TensorSig(f"output{i}", *t) for i, t in enumerate(outs)],
    )
