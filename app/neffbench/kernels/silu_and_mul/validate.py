"""SiluAndMul's validation rules: width and buckets, each problem naming its field."""

from __future__ import annotations

from neffbench.kernels import token
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec
from neffbench.schema.problems import Problem

MAX_INTERMEDIATE = 131072
MAX_TOKENS = 1_048_576
# The fields checked below rather than by the generic range check.
OWN_RANGE_CHECKS = frozenset({"act.intermediate_size", "inputs.num_tokens"})


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def validate(spec: SiluAndMulCompileSpec) -> list[Problem]:
    problems: list[Problem] = []
    d = spec.act.intermediate_size
    if d < 1:
        problems.append(_error("act.intermediate_size", f"Intermediate size must be at least 1; got {d}."))
    elif d > MAX_INTERMEDIATE:
        problems.append(
            _error("act.intermediate_size", f"Intermediate size must be at most {MAX_INTERMEDIATE}; got {d}.")
        )
    valid = token.check(spec.inputs.num_tokens, problems, max_tokens=MAX_TOKENS)
    if valid and d >= 1:
        token.warn_if_large(max(valid) * 2 * d, spec.inputs.dtype, problems, what="input takes")
    return problems
