"""The base of the kernels whose buckets are token counts (``inputs.num_tokens``): RoPE and the vLLM ops.

``TokenKernel`` buckets, names and counts by ``inputs.num_tokens``; ``token_inputs`` makes a kernel's
``[inputs]`` section from the fields it adds (its ``num_tokens`` first, then the class's own, then
``dtype`` and ``seed``), so each kernel writes only what differs. ``check`` and ``warn_if_large`` are the
rules every such kernel applies to its buckets. Nothing here imports torch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from neffbench.kernels.api import Bucket, Kernel
from neffbench.schema.fields import DTYPES, ui
from neffbench.schema.header import dataclass_transform
from neffbench.schema.problems import Problem

_T = TypeVar("_T")

if TYPE_CHECKING:

    @dataclass(frozen=True, kw_only=True)
    class TokenInputs:
        """What ``token_inputs`` adds to an ``[inputs]`` section, as a type checker sees it."""

        num_tokens: tuple[int, ...] = ()
        dtype: str = "float32"
        seed: int = 0

else:
    # At run time the decorator adds the fields itself: num_tokens first, dtype and seed last.
    TokenInputs = object

AXIS = "num_tokens"
FIELD = f"inputs.{AXIS}"
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# Example inputs this big need that much memory to build and several times that to trace.
LARGE_INPUT_BYTES = 2 * 2**30
MAX_TOKENS = 1_048_576
SEED_HELP = "Seed for the example input values (values do not change the NEFF)."


class TokenKernel(Kernel):
    """A kernel with one NEFF per ``inputs.num_tokens`` value, whose throughput counts tokens."""

    def buckets(self, spec: Any) -> list[dict[str, int]]:
        return [{AXIS: n} for n in spec.inputs.num_tokens]

    def for_bucket(self, spec: Any, bucket: Bucket) -> Any:
        return dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, num_tokens=(bucket[AXIS],)))

    def pick_bucket(self, spec: Any, value: int) -> dict[str, int] | None:
        return {AXIS: value} if value in spec.inputs.num_tokens else None

    def items_per_call(self, bucket: Bucket) -> int:
        return int(bucket.get(AXIS, 1))


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def token_inputs(
    *,
    tokens: tuple[int, ...],
    per_call: str,
    dtype_help: str,
    seed_help: str = SEED_HELP,
    max_tokens: int | None = MAX_TOKENS,
) -> Callable[[type[_T]], type[_T]]:
    """Decorate a class of a kernel's own ``[inputs]`` fields (none, or RoPE's positions): the frozen section with
    ``num_tokens`` (default ``tokens``; ``per_call`` says what one token is) first and ``dtype``, ``seed`` last."""

    def make(cls: type[_T]) -> type[_T]:
        own = dict(cls.__dict__.get("__annotations__", {}))
        cls.__annotations__ = {AXIS: tuple[int, ...], **own, "dtype": str, "seed": int}
        added = {
            AXIS: field(
                default=tokens,
                metadata=ui(
                    "Tokens (buckets)",
                    f"{per_call} Shapes are fixed at trace time, so each value is its own NEFF; list "
                    "several to compile one bucket each.",
                    min=1,
                    max=max_tokens,
                ),
            ),
            "dtype": field(default="float32", metadata=ui("Dtype", dtype_help, choices=DTYPES)),
            "seed": field(default=0, metadata=ui("Seed", seed_help, min=0, max=2**31 - 1, neff=False)),
        }
        for attr, value in added.items():
            setattr(cls, attr, value)
        return dataclass(frozen=True)(cls)

    return make


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
        problems.append(
            Problem(
                FIELD,
                f"The largest bucket's example {what} {gib(size)}; this machine has "
                f"{gib(total)}, so it cannot even build them.",
            )
        )
    elif size > LARGE_INPUT_BYTES:
        problems.append(
            Problem(
                FIELD,
                f"The largest bucket's example {what} {size / 2**30:.1f} GiB, and building "
                f"and tracing {'them' if what.endswith('take') else 'it'} needs several times "
                "that much memory.",
                "warning",
            )
        )
