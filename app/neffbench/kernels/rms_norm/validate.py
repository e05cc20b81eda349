"""RMSNorm's validation rules: width, epsilon, weight and buckets, each problem naming its field."""

from __future__ import annotations

from neffbench.kernels.rms_norm.params import RmsNormCompileSpec
from neffbench.spec.problems import Problem

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
MAX_HIDDEN = 65536
MAX_TOKENS = 1_048_576
# Above this models do not go (1e-5 and 1e-6 are usual): a large epsilon damps every small row.
LARGE_EPS = 1e-2
# Example inputs this big need that much memory to build and several times that to trace.
LARGE_INPUT_BYTES = 2 * 2**30
# The fields checked below rather than by the generic range check.
OWN_RANGE_CHECKS = frozenset({"norm.hidden_size", "norm.eps", "inputs.num_tokens"})


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def check_buckets(num_tokens: tuple[int, ...], problems: list[Problem]) -> None:
    """Buckets must be listed, positive, within range and unique."""
    if not num_tokens:
        problems.append(_error("inputs.num_tokens", "List at least one number of tokens."))
        return
    seen: set[int] = set()
    for n in num_tokens:
        if n < 1:
            problems.append(_error("inputs.num_tokens", f"Every bucket needs at least 1 token; got {n}."))
        elif n > MAX_TOKENS:
            problems.append(_error("inputs.num_tokens", f"A bucket can hold at most {MAX_TOKENS} tokens; got {n}."))
        elif n in seen:
            problems.append(_error("inputs.num_tokens", f"Bucket {n} is listed twice."))
        seen.add(n)


def check_input_size(elements: int, dtype: str, problems: list[Problem]) -> None:
    """Warn when the largest bucket's example inputs alone take gigabytes."""
    size = elements * DTYPE_BYTES.get(dtype, 4)
    if size > LARGE_INPUT_BYTES:
        problems.append(_warning("inputs.num_tokens", f"The largest bucket's example inputs take "
                                                      f"{size / 2**30:.1f} GiB, and building and tracing "
                                                      "them needs several times that much memory."))


def validate(spec: RmsNormCompileSpec) -> list[Problem]:
    problems: list[Problem] = []
    n = spec.norm
    if n.hidden_size < 1:
        problems.append(_error("norm.hidden_size", f"Hidden size must be at least 1; got {n.hidden_size}."))
    elif n.hidden_size > MAX_HIDDEN:
        problems.append(_error("norm.hidden_size", f"Hidden size must be at most {MAX_HIDDEN}; got {n.hidden_size}."))
    if not n.eps > 0:  # also catches NaN
        problems.append(_error("norm.eps", f"Epsilon must be greater than 0, or a row of zeros divides by zero; "
                                           f"got {n.eps:g}."))
    elif n.eps > LARGE_EPS:
        problems.append(_warning("norm.eps", f"Epsilon {n.eps:g} is far above the 1e-5 or 1e-6 models use, and it "
                                             "shrinks every row whose mean square is small."))
    if n.weight_mode == "buffer" and n.weight_init == "ones":
        problems.append(_warning("norm.weight_init", "A weight of ones inlined into the NEFF lets the compiler fold "
                                                     "the multiply away, so the NEFF may not time it; use random "
                                                     "values or pass the weight as an input."))
    check_buckets(spec.inputs.num_tokens, problems)
    valid = [t for t in spec.inputs.num_tokens if 1 <= t <= MAX_TOKENS]
    if valid and n.hidden_size >= 1:
        check_input_size(max(valid) * n.hidden_size * (2 if n.with_residual else 1), spec.inputs.dtype, problems)
    return problems
