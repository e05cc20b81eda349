"""Validation: every problem of a spec at once, errors that block a compile and warnings that do not."""

from __future__ import annotations

import re
import shlex

from neffbench.spec.problems import Problem
from neffbench.spec.schema import SECTIONS, CompileSpec, is_active, section_fields

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# Above this an inlined table makes the NEFF noticeably bigger and slower to load.
LARGE_TABLE_BYTES = 16 * 2**20
LNC_TARGETS = ("trn2", "trn3")

# Options the spec has a field for: giving them in extra args too is a contradiction waiting to happen.
_FIELD_OPTIONS = {
    "--target": "target",
    "--lnc": "lnc",
    "--logical-nc-config": "lnc",
    "--optlevel": "optlevel",
    "--auto-cast": "auto_cast",
    "--auto-cast-type": "auto_cast_type",
    "--model-type": "model_type",
}
# Options the workbench sets itself so that it can find the NEFF and the log.
_RESERVED_OPTIONS = ("--output", "--logfile", "--framework")


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def parse_extra_args(extra: tuple[str, ...] | list[str]) -> list[tuple[str, str | None]]:
    """Pair each option in extra args with its value ('--opt=v', '--opt v', '-O3' all understood)."""
    out: list[tuple[str, str | None]] = []
    tokens = list(extra)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if re.fullmatch(r"-O[0-9]", tok):
            out.append(("--optlevel", tok[2:]))
        elif tok.startswith("--") and "=" in tok:
            opt, value = tok.split("=", 1)
            out.append((opt, value))
        elif tok.startswith("-"):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and not nxt.startswith("-"):
                out.append((tok, nxt))
                i += 1
            else:
                out.append((tok, None))
        i += 1
    return out


def split_extra_args(text: str) -> tuple[str, ...]:
    """Shell-split extra args typed as one line; raises ValueError with shlex's reason."""
    return tuple(shlex.split(text))


def _check_ranges(spec: CompileSpec, problems: list[Problem], skip: set[str]) -> None:
    """Generic bounds and choices from field metadata, for fields without a rule of their own."""
    for section in SECTIONS:
        sect = getattr(spec, section)
        for f in section_fields(section):
            where = f"{section}.{f.name}"
            if where in skip or not is_active(spec, section, f.name):
                continue
            meta = f.metadata
            value = getattr(sect, f.name)
            label = meta["label"]
            if value is None:
                if not meta["optional"]:
                    problems.append(_error(where, f"{label} must be set."))
                continue
            if meta["choices"] is not None:
                if value not in meta["choices"]:
                    problems.append(_error(where, f"{label} must be one of {', '.join(meta['choices'])}; got {value!r}."))
                continue
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                lo, hi = meta["min"], meta["max"]
                if (lo is not None and v < lo) or (hi is not None and v > hi):
                    problems.append(_error(where, f"{label} must be between {lo:g} and {hi:g}; got {v:g}."))


def _model_rules(spec: CompileSpec, problems: list[Problem]) -> None:
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
            problems.append(_error("model.rotary_dim",
                                   f"Rotary dim must be even (elements are rotated in pairs); got {m.rotary_dim}."))
        if m.rotary_dim > m.head_size >= 1:
            problems.append(_error("model.rotary_dim",
                                   f"Rotary dim ({m.rotary_dim}) cannot be larger than the head size ({m.head_size})."))
        if m.partial_rotary_factor != 1.0 and m.head_size * m.partial_rotary_factor != m.rotary_dim:
            problems.append(_error("model.partial_rotary_factor",
                                   f"Set rotary dim or partial rotary factor, not both: rotary dim {m.rotary_dim} "
                                   f"disagrees with {m.head_size} x {m.partial_rotary_factor:g} = "
                                   f"{m.head_size * m.partial_rotary_factor:g}."))
    else:
        prf = m.partial_rotary_factor
        if not 0.0 < prf <= 1.0:
            problems.append(_error("model.partial_rotary_factor",
                                   f"Partial rotary factor must be above 0 and at most 1; got {prf:g}."))
        elif m.head_size >= 1:
            dim = m.head_size * prf
            if not float(dim).is_integer() or int(dim) % 2 or int(dim) < 2:
                problems.append(_error("model.partial_rotary_factor",
                                       f"Head size {m.head_size} x partial rotary factor {prf:g} = {dim:g}, "
                                       "which is not an even whole number of at least 2."))
    if m.with_key and m.num_heads_q >= 1 and m.num_heads_k >= 1 and m.num_heads_q % m.num_heads_k:
        problems.append(_warning("model.num_heads_k",
                                 f"{m.num_heads_q} query heads is not a multiple of {m.num_heads_k} key heads, "
                                 "which no grouped-query attention model uses."))


def _rope_rules(spec: CompileSpec, problems: list[Problem]) -> None:
    r = spec.rope
    if r.max_pos < 1:
        problems.append(_error("rope.max_pos", f"Max positions must be at least 1; got {r.max_pos}."))
    if not r.base > 0:
        problems.append(_error("rope.base", f"Base must be greater than 0; got {r.base:g}."))
    if r.rope_type not in ("default",) and is_active(spec, "rope", "factor"):
        if not r.factor > 0:
            problems.append(_error("rope.factor", f"Factor must be greater than 0 for {r.rope_type} scaling; "
                                                  f"got {r.factor:g}."))
        elif r.factor < 1:
            problems.append(_warning("rope.factor", f"A factor below 1 ({r.factor:g}) shrinks the context instead "
                                                    "of extending it."))
    if is_active(spec, "rope", "original_max_position_embeddings") and r.original_max_position_embeddings < 1:
        problems.append(_error("rope.original_max_position_embeddings",
                               f"Original max positions must be at least 1; got {r.original_max_position_embeddings}."))
    if r.rope_type == "dynamic" and spec.model.effective_rotary_dim == 2:
        problems.append(_error("rope.rope_type", "Dynamic NTK scaling needs a rotary dim above 2: its base is raised "
                                                 "to dim / (dim - 2)."))
    if r.rope_type == "llama3":
        for name in ("low_freq_factor", "high_freq_factor"):
            if not getattr(r, name) > 0:
                problems.append(_error(f"rope.{name}", f"{name} must be greater than 0; got {getattr(r, name):g}."))
        if r.high_freq_factor <= r.low_freq_factor:
            problems.append(_error("rope.high_freq_factor",
                                   f"High-freq factor ({r.high_freq_factor:g}) must be greater than the low-freq "
                                   f"factor ({r.low_freq_factor:g})."))
    if r.rope_type == "yarn":
        if r.beta_fast <= r.beta_slow:
            problems.append(_error("rope.beta_fast", f"Beta fast ({r.beta_fast:g}) must be greater than beta slow "
                                                     f"({r.beta_slow:g})."))
        if r.beta_slow <= 0:
            problems.append(_error("rope.beta_slow", f"Beta slow must be greater than 0; got {r.beta_slow:g}."))
        if bool(r.mscale) != bool(r.mscale_all_dim):
            which = "mscale_all_dim" if r.mscale else "mscale"
            problems.append(_warning(f"rope.{which}", "mscale and mscale_all_dim only take effect together; "
                                                      "with one unset the standard 0.1*ln(factor)+1 scale is used."))
    if r.cache_dtype != "float32":
        problems.append(_warning("rope.cache_dtype", f"A {r.cache_dtype} cos/sin table loses precision at large "
                                                     "positions; float32 is what vLLM computes it in."))
    dim = spec.model.effective_rotary_dim
    table = max(r.max_pos, 0) * max(dim, 0) * DTYPE_BYTES.get(r.cache_dtype, 4)
    if r.cache_mode == "buffer" and table > LARGE_TABLE_BYTES:
        problems.append(_warning("rope.max_pos", f"The cos/sin table ({table / 2**20:.1f} MiB) is inlined into the "
                                                 "NEFF as a constant; pass it as an input to keep the NEFF small."))


def _inputs_rules(spec: CompileSpec, problems: list[Problem]) -> None:
    i, max_pos = spec.inputs, spec.rope.max_pos
    if not i.num_tokens:
        problems.append(_error("inputs.num_tokens", "List at least one number of tokens."))
        return
    seen: set[int] = set()
    for n in i.num_tokens:
        if n < 1:
            problems.append(_error("inputs.num_tokens", f"Every bucket needs at least 1 token; got {n}."))
        elif n in seen:
            problems.append(_error("inputs.num_tokens", f"Bucket {n} is listed twice."))
        seen.add(n)
    largest = max(i.num_tokens)
    if max_pos >= 1 and largest >= 1:
        if i.positions == "range" and largest > max_pos:
            problems.append(_error("inputs.num_tokens",
                                   f"Positions 0..{largest - 1} reach max positions ({max_pos}): the table has "
                                   f"rows 0..{max_pos - 1}."))
        if i.positions == "offset" and i.position_offset + largest > max_pos:
            problems.append(_error("inputs.position_offset",
                                   f"Positions {i.position_offset}..{i.position_offset + largest - 1} reach max "
                                   f"positions ({max_pos}): the table has rows 0..{max_pos - 1}."))


def _compiler_rules(spec: CompileSpec, problems: list[Problem]) -> None:
    c = spec.compiler
    if c.lnc is not None and c.target not in LNC_TARGETS:
        problems.append(_warning("compiler.lnc", f"neuronx-cc documents --lnc for Trn2 and later only; "
                                                 f"target {c.target} may reject or ignore it."))
    if c.auto_cast != "none":
        problems.append(_warning("compiler.auto_cast", f"--auto-cast {c.auto_cast} to {c.auto_cast_type} changes "
                                                       "numerics: expect a larger error against the reference."))
    fields = {"target": c.target, "lnc": c.lnc, "optlevel": c.optlevel, "auto_cast": c.auto_cast,
              "auto_cast_type": c.auto_cast_type, "model_type": c.model_type}
    for opt, value in parse_extra_args(c.extra_args):
        if opt in _RESERVED_OPTIONS:
            problems.append(_error("compiler.extra_args", f"Extra args must not set {opt}: the workbench sets it "
                                                          "so that it can find the NEFF and the log."))
        elif opt in _FIELD_OPTIONS:
            name = _FIELD_OPTIONS[opt]
            have = fields[name]
            if value is None or have is None or str(have) != value:
                problems.append(_error("compiler.extra_args",
                                       f"Extra args set {opt} {value or ''}".rstrip() +
                                       f" but the {name} field is {have}; set the {name} field instead."))
            else:
                problems.append(_warning("compiler.extra_args", f"{opt} {value} in extra args repeats the "
                                                                f"{name} field."))
    if c.fast_loading and "--enable-fast-loading-neuron-binaries" in c.extra_args:
        problems.append(_warning("compiler.extra_args", "--enable-fast-loading-neuron-binaries repeats the "
                                                        "fast-loading field."))


def validate(spec: CompileSpec) -> list[Problem]:
    """Every problem of the spec, errors first; never raises for a spec of the right types."""
    problems: list[Problem] = []
    if not NAME_RE.match(spec.name or ""):
        problems.append(_error("name", f"Name must be 1-64 letters, digits, '.', '-' or '_', starting with a "
                                       f"letter or digit; got {spec.name!r}."))
    if not spec.workdir.strip():
        problems.append(_error("workdir", "Workdir must be set."))
    _check_ranges(spec, problems, skip={
        "model.head_size", "model.rotary_dim", "model.partial_rotary_factor", "model.num_heads_q",
        "model.num_heads_k", "rope.max_pos", "rope.base", "rope.factor", "rope.low_freq_factor",
        "rope.high_freq_factor", "rope.original_max_position_embeddings", "rope.beta_slow",
        "inputs.num_tokens",
    })
    _model_rules(spec, problems)
    _rope_rules(spec, problems)
    _inputs_rules(spec, problems)
    _compiler_rules(spec, problems)
    return sorted(problems, key=lambda p: p.severity != "error")


def errors(spec: CompileSpec) -> list[Problem]:
    return [p for p in validate(spec) if p.severity == "error"]
