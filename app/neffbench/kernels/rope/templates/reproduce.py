#: ${ops_source}

HEAD_SIZE = "${head_size}"
ROTARY_DIM = "${rotary_dim}"
IS_NEOX_STYLE = "${is_neox_style}"
WITH_KEY = "${with_key}"
NUM_HEADS_Q = "${num_heads_q}"
NUM_HEADS_K = "${num_heads_k}"
MAX_POS = "${max_pos}"
BASE = "${base}"
ROPE_SCALING = "${rope_scaling}"
CACHE_MODE = "${cache_mode}"  # "input": the table is the last input; "buffer": inlined into the NEFF
CACHE_DTYPE = "${cache_dtype}"
NUM_TOKENS = "${num_tokens}"
POSITIONS = "${positions}"
POSITION_OFFSET = "${position_offset}"
DTYPE = "${dtype}"
SEED = "${seed}"


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
