"""RoPE's part of ``reproduce.py``: the kernel's source as it ran and this job's values, torch alone."""

from __future__ import annotations

from pathlib import Path

from neffbench.kernels.rope.params import RopeCompileSpec
from neffbench.kernels.source import module_source


def source(spec: RopeCompileSpec) -> str:
    from neffbench.kernels.rope.build import rope_scaling

    m, r, i = spec.model, spec.rope, spec.inputs
    return f'''{module_source(Path(__file__).with_name("ops.py"))}

HEAD_SIZE = {m.head_size!r}
ROTARY_DIM = {m.effective_rotary_dim!r}
IS_NEOX_STYLE = {m.is_neox_style!r}
WITH_KEY = {m.with_key!r}
NUM_HEADS_Q = {m.num_heads_q!r}
NUM_HEADS_K = {m.num_heads_k!r}
MAX_POS = {r.max_pos!r}
BASE = {r.base!r}
ROPE_SCALING = {rope_scaling(spec)!r}
CACHE_MODE = {r.cache_mode!r}  # "input": the table is the last input; "buffer": inlined into the NEFF
CACHE_DTYPE = {r.cache_dtype!r}
NUM_TOKENS = {i.num_tokens[0]!r}
POSITIONS = {i.positions!r}
POSITION_OFFSET = {i.position_offset!r}
DTYPE = {i.dtype!r}
SEED = {i.seed!r}


def build_cache() -> torch.Tensor:
    return build_cos_sin_cache(ROTARY_DIM, MAX_POS, BASE, ROPE_SCALING).to(TORCH_DTYPES[CACHE_DTYPE])


def build_module() -> torch.nn.Module:
    return RopeModule(HEAD_SIZE, ROTARY_DIM, IS_NEOX_STYLE, with_key=WITH_KEY,
                      cache=build_cache() if CACHE_MODE == "buffer" else None).eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the module's order: positions, query, [key], [cos_sin_cache]."""
    generator = torch.Generator().manual_seed(SEED)
    if POSITIONS == "range":
        positions = torch.arange(NUM_TOKENS, dtype=torch.int64)
    elif POSITIONS == "offset":
        positions = torch.arange(POSITION_OFFSET, POSITION_OFFSET + NUM_TOKENS, dtype=torch.int64)
    else:
        positions = torch.randint(0, MAX_POS, (NUM_TOKENS,), generator=generator, dtype=torch.int64)
    dtype = TORCH_DTYPES[DTYPE]
    query = torch.randn(NUM_TOKENS, NUM_HEADS_Q * HEAD_SIZE, generator=generator, dtype=torch.float32).to(dtype)
    out = [positions, query]
    if WITH_KEY:
        out.append(torch.randn(NUM_TOKENS, NUM_HEADS_K * HEAD_SIZE, generator=generator, dtype=torch.float32).to(dtype))
    if CACHE_MODE == "input":
        out.append(build_cache())
    return tuple(out)
'''
