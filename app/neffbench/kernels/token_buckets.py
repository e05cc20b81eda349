"""Checks shared by the kernels whose buckets are token counts (``inputs.num_tokens``): RoPE and the vLLM ops."""

from __future__ import annotations

from neffbench.spec.problems import Problem

FIELD = "inputs.num_tokens"
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# Example inputs this big need that much memory to build and several times that to trace.
LARGE_INPUT_BYTES = 2 * 2**30


def check(num_tokens: tuple[int, ...], problems: list[Problem], *, max_tokens: int | None = None) -> list[int]:
    """Buckets must be listed, positive, unique (and at most ``max_tokens``); returns the usable ones."""
    if not num_tokens:
        problems.append(Problem(FIELD, "List at least one number of tokens."))
        return []
    seen: set[int] = set()
    valid = []
    for n in num_tokens:
        if n < 1:
            problems.append(Problem(FIELD, f"Every bucket needs at least 1 token; got {n}."))
        elif max_tokens is not None and n > max_tokens:
            problems.append(Problem(FIELD, f"A bucket can hold at most {max_tokens} tokens; got {n}."))
        elif n in seen:
            problems.append(Problem(FIELD, f"Bucket {n} is listed twice."))
        else:
            valid.append(n)
        seen.add(n)
    return valid


def warn_if_large(elements: int, dtype: str, problems: list[Problem], *, what: str = "inputs take") -> None:
    """An error when the largest bucket's example inputs alone need more memory than this machine has (refused
    in words before anything allocates them), a warning when they take gigabytes."""
    from neffbench.machine_memory import gib, total_bytes

    size = elements * DTYPE_BYTES.get(dtype, 4)
    total = total_bytes()
    if total is not None and size > total:
        problems.append(Problem(FIELD, f"The largest bucket's example {what} {gib(size)}; this machine has "
                                       f"{gib(total)}, so it cannot even build them."))
    elif size > LARGE_INPUT_BYTES:
        problems.append(Problem(FIELD, f"The largest bucket's example {what} {size / 2**30:.1f} GiB, and building "
                                       f"and tracing {'them' if what.endswith('take') else 'it'} needs several times "
                                       "that much memory.", "warning"))
