"""SiluAndMul's validation rules: width and buckets, each problem naming its field."""

from __future__ import annotations

from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec
from neffbench.spec.problems import Problem

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
MAX_INTERMEDIATE = 131072
MAX_TOKENS = 1_048_576
# Example inputs this big need that much memory to build and several times that to trace.
LARGE_INPUT_BYTES = 2 * 2**30
# The fields checked below rather than by the generic range check.
OWN_RANGE_CHECKS = frozenset({"act.intermediate_size", "inputs.num_tokens"})


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def validate(spec: SiluAndMulCompileSpec) -> list[Problem]:
    problems: list[Problem] = []
    d = spec.act.intermediate_size
    if d < 1:
        problems.append(_error("act.intermediate_size", f"Intermediate size must be at least 1; got {d}."))
    elif d > MAX_INTERMEDIATE:
        problems.append(_error("act.intermediate_size", f"Intermediate size must be at most {MAX_INTERMEDIATE}; "
                                                        f"got {d}."))
    buckets = spec.inputs.num_tokens
    if not buckets:
        problems.append(_error("inputs.num_tokens", "List at least one number of tokens."))
        return problems
    seen: set[int] = set()
    for n in buckets:
        if n < 1:
            problems.append(_error("inputs.num_tokens", f"Every bucket needs at least 1 token; got {n}."))
        elif n > MAX_TOKENS:
            problems.append(_error("inputs.num_tokens", f"A bucket can hold at most {MAX_TOKENS} tokens; got {n}."))
        elif n in seen:
            problems.append(_error("inputs.num_tokens", f"Bucket {n} is listed twice."))
        seen.add(n)
    valid = [n for n in buckets if 1 <= n <= MAX_TOKENS]
    size = (max(valid) * 2 * d * DTYPE_BYTES.get(spec.inputs.dtype, 4)) if valid and d >= 1 else 0
    if size > LARGE_INPUT_BYTES:
        problems.append(_warning("inputs.num_tokens", f"The largest bucket's example input takes "
                                                      f"{size / 2**30:.1f} GiB, and building and tracing it "
                                                      "needs several times that much memory."))
    return problems
