"""RoPE's validation rules: geometry, table and positions, each problem naming its field."""

from __future__ import annotations

from neffbench.kernels import token
from neffbench.kernels.rope.params import RopeCompileSpec
from neffbench.schema import is_active
from neffbench.schema.problems import Problem
from neffbench.words import number

DTYPE_BYTES = token.DTYPE_BYTES
# Above this an inlined table makes the NEFF noticeably bigger and slower to load.
LARGE_TABLE_BYTES = 16 * 2**20
# The fields checked below rather than by the generic range check.
OWN_RANGE_CHECKS = frozenset(
    {
        "model.head_size",
        "model.rotary_dim",
        "model.partial_rotary_factor",
        "model.num_heads_q",
        "model.num_heads_k",
        "rope.max_pos",
        "rope.base",
        "rope.factor",
        "rope.low_freq_factor",
        "rope.high_freq_factor",
        "rope.original_max_position_embeddings",
        "rope.beta_slow",
        "inputs.num_tokens",
    }
)


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def _model_rules(spec: RopeCompileSpec, problems: list[Problem]) -> None:
    m = spec.model
    if m.head_size < 1:
        problems.append(_error("model.head_size", f"Head size must be at least 1; got {m.head_size}."))
    for name, label in (("num_heads_q", "Query heads"), ("num_heads_k", "Key heads")):
        value = getattr(m, name)
        if value < 1:
            problems.append(_error(f"model.{name}", f"{label} must be at least 1; got {value}."))
    if m.rotary_dim is not None:
        if m.rotary_dim < 2:
            problems.append(_error("model.rotary_dim", f"Rotary dim must be at least 2; got {m.rotary_dim}."))
        elif m.rotary_dim % 2:
            problems.append(
                _error(
                    "model.rotary_dim", f"Rotary dim must be even (elements are rotated in pairs); got {m.rotary_dim}."
                )
            )
        if m.rotary_dim > m.head_size >= 1:
            problems.append(
                _error(
                    "model.rotary_dim",
                    f"Rotary dim ({m.rotary_dim}) cannot be larger than the head size ({m.head_size}).",
                )
            )
        if m.partial_rotary_factor != 1.0 and m.head_size * m.partial_rotary_factor != m.rotary_dim:
            problems.append(
                _error(
                    "model.partial_rotary_factor",
                    f"Set rotary dim or partial rotary factor, not both: rotary dim {m.rotary_dim} "
                    f"disagrees with {m.head_size} x {number(m.partial_rotary_factor)} = "
                    f"{m.head_size * m.partial_rotary_factor:g}.",
                )
            )
    else:
        prf = m.partial_rotary_factor
        if not 0.0 < prf <= 1.0:
            problems.append(
                _error(
                    "model.partial_rotary_factor",
                    f"Partial rotary factor must be above 0 and at most 1; got {number(prf)}.",
                )
            )
        elif m.head_size >= 1:
            dim = m.head_size * prf
            if not float(dim).is_integer() or int(dim) % 2 or int(dim) < 2:
                problems.append(
                    _error(
                        "model.partial_rotary_factor",
                        f"Head size {m.head_size} x partial rotary factor {number(prf)} = {dim:g}, "
                        "which is not an even whole number of at least 2.",
                    )
                )
    if m.with_key and m.num_heads_q >= 1 and m.num_heads_k >= 1 and m.num_heads_q % m.num_heads_k:
        problems.append(
            _warning(
                "model.num_heads_k",
                f"{m.num_heads_q} query heads is not a multiple of {m.num_heads_k} key heads, "
                "which no grouped-query attention model uses.",
            )
        )


def _rope_rules(spec: RopeCompileSpec, problems: list[Problem]) -> None:
    r = spec.rope
    if r.max_pos < 1:
        problems.append(_error("rope.max_pos", f"Max positions must be at least 1; got {r.max_pos}."))
    if not r.base > 0:
        problems.append(_error("rope.base", f"Base must be greater than 0; got {number(r.base)}."))
    if r.rope_type not in ("default",) and is_active(spec, "rope", "factor"):
        if not r.factor > 0:
            problems.append(
                _error(
                    "rope.factor", f"Factor must be greater than 0 for {r.rope_type} scaling; got {number(r.factor)}."
                )
            )
        elif r.factor < 1:
            problems.append(
                _warning(
                    "rope.factor", f"A factor below 1 ({number(r.factor)}) shrinks the context instead of extending it."
                )
            )
    if is_active(spec, "rope", "original_max_position_embeddings") and r.original_max_position_embeddings < 1:
        problems.append(
            _error(
                "rope.original_max_position_embeddings",
                f"Original max positions must be at least 1; got {r.original_max_position_embeddings}.",
            )
        )
    if r.rope_type == "dynamic" and spec.model.effective_rotary_dim == 2:
        problems.append(
            _error(
                "rope.rope_type",
                "Dynamic NTK scaling needs a rotary dim above 2: its base is raised to dim / (dim - 2).",
            )
        )
    if r.rope_type == "llama3":
        for name in ("low_freq_factor", "high_freq_factor"):
            if not getattr(r, name) > 0:
                problems.append(
                    _error(f"rope.{name}", f"{name} must be greater than 0; got {number(getattr(r, name))}.")
                )
        if r.high_freq_factor <= r.low_freq_factor:
            problems.append(
                _error(
                    "rope.high_freq_factor",
                    f"High-freq factor ({number(r.high_freq_factor)}) must be greater than the low-freq "
                    f"factor ({number(r.low_freq_factor)}).",
                )
            )
    if r.rope_type == "yarn":
        if r.beta_fast <= r.beta_slow:
            problems.append(
                _error(
                    "rope.beta_fast",
                    f"Beta fast ({number(r.beta_fast)}) must be greater than beta slow ({number(r.beta_slow)}).",
                )
            )
        if r.beta_slow <= 0:
            problems.append(_error("rope.beta_slow", f"Beta slow must be greater than 0; got {number(r.beta_slow)}."))
        if bool(r.mscale) != bool(r.mscale_all_dim):
            which = "mscale_all_dim" if r.mscale else "mscale"
            problems.append(
                _warning(
                    f"rope.{which}",
                    "mscale and mscale_all_dim only take effect together; "
                    "with one unset the standard 0.1*ln(factor)+1 scale is used.",
                )
            )
    if r.cache_dtype != "float32":
        problems.append(
            _warning(
                "rope.cache_dtype",
                f"A {r.cache_dtype} cos/sin table loses precision at large "
                "positions; float32 is what vLLM computes it in.",
            )
        )
    dim = spec.model.effective_rotary_dim
    table = max(r.max_pos, 0) * max(dim, 0) * DTYPE_BYTES.get(r.cache_dtype, 4)
    if r.cache_mode == "buffer" and table > LARGE_TABLE_BYTES:
        problems.append(
            _warning(
                "rope.max_pos",
                f"The cos/sin table ({table / 2**20:.1f} MiB) is inlined into the "
                "NEFF as a constant; pass it as an input to keep the NEFF small.",
            )
        )


def _inputs_rules(spec: RopeCompileSpec, problems: list[Problem]) -> None:
    i, max_pos = spec.inputs, spec.rope.max_pos
    token.check(i.num_tokens, problems, max_tokens=token.MAX_TOKENS)
    if not i.num_tokens:
        return
    largest = max(i.num_tokens)
    if max_pos >= 1 and largest >= 1:
        if i.positions == "range" and largest > max_pos:
            problems.append(
                _error(
                    "inputs.num_tokens",
                    f"Positions 0..{largest - 1} reach max positions ({max_pos}): the table has rows 0..{max_pos - 1}.",
                )
            )
        if i.positions == "offset" and i.position_offset + largest > max_pos:
            problems.append(
                _error(
                    "inputs.position_offset",
                    f"Positions {i.position_offset}..{i.position_offset + largest - 1} reach max "
                    f"positions ({max_pos}): the table has rows 0..{max_pos - 1}.",
                )
            )


def ignored(spec: RopeCompileSpec) -> dict[str, str]:
    """Fields the other values make irrelevant (see ``Kernel.ignored_fields``)."""
    m = spec.model
    out = {}
    if m.rotary_dim is not None:
        # effective_rotary_dim reads the factor only while rotary_dim is unset.
        out["model.partial_rotary_factor"] = "rotary_dim is set, and it wins over the factor"
    if not m.with_key:
        out["model.num_heads_k"] = "with_key is off, so the module takes no key"
    return out


def validate(spec: RopeCompileSpec) -> list[Problem]:
    problems: list[Problem] = []
    _model_rules(spec, problems)
    _rope_rules(spec, problems)
    _inputs_rules(spec, problems)
    return problems
