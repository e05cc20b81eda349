"""RMSNorm's validation rules: width, epsilon, weight and buckets, each problem naming its field."""

from __future__ import annotations

from neffbench.kernels import token
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec
from neffbench.schema.problems import Problem

MAX_HIDDEN = 65536
MAX_TOKENS = 1_048_576
# Above this models do not go (1e-5 and 1e-6 are usual): a large epsilon damps every small row.
LARGE_EPS = 1e-2
# The fields checked below rather than by the generic range check.
OWN_RANGE_CHECKS = frozenset({"norm.hidden_size", "norm.eps", "inputs.num_tokens"})


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def validate(spec: RmsNormCompileSpec) -> list[Problem]:
    problems: list[Problem] = []
    n = spec.norm
    if n.hidden_size < 1:
        problems.append(_error("norm.hidden_size", f"Hidden size must be at least 1; got {n.hidden_size}."))
    elif n.hidden_size > MAX_HIDDEN:
        problems.append(_error("norm.hidden_size", f"Hidden size must be at most {MAX_HIDDEN}; got {n.hidden_size}."))
    if not n.eps > 0:  # also catches NaN
        problems.append(
            _error("norm.eps", f"Epsilon must be greater than 0, or a row of zeros divides by zero; got {n.eps:g}.")
        )
    elif n.eps > LARGE_EPS:
        problems.append(
            _warning(
                "norm.eps",
                f"Epsilon {n.eps:g} is far above the 1e-5 or 1e-6 models use, and it "
                "shrinks every row whose mean square is small.",
            )
        )
    if n.weight_mode == "buffer" and n.weight_init == "ones":
        problems.append(
            _warning(
                "norm.weight_init",
                "A weight of ones inlined into the NEFF lets the compiler fold "
                "the multiply away, so the NEFF may not time it; use random "
                "values or pass the weight as an input.",
            )
        )
    valid = token.check(spec.inputs.num_tokens, problems, max_tokens=MAX_TOKENS)
    if valid and n.hidden_size >= 1:
        token.warn_if_large(max(valid) * n.hidden_size * (2 if n.with_residual else 1), spec.inputs.dtype, problems)
    return problems
