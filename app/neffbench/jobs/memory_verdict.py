"""Whether a compile's memory estimate fits this machine: ok, a warning past the free memory, a block past all of it.

One decision for the form, the sweep dialog, ``check``, ``compile`` and ``sweep``, so that a spec whose own
estimate is thousands of times the machine's memory is never accepted in silence anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from neffbench.jobs.memory_estimate import Estimate, estimate
from neffbench.machine_memory import available_bytes, gib, total_bytes

OVERRIDE_FLAG = "--allow-over-memory"
CLI_OVERRIDE = f"pass {OVERRIDE_FLAG}"


@dataclass(frozen=True)
class MemoryVerdict:
    """``level`` is ``ok``, ``warn`` or ``block``; ``message`` is the one sentence a user reads (empty when ok)."""

    level: str
    need: int | None = None
    free: int | None = None
    total: int | None = None
    message: str = ""

    @property
    def blocks(self) -> bool:
        return self.level == "block"

    def refused(self, allowed: bool) -> bool:
        """Whether nothing may start: a block the user has not overridden."""
        return self.blocks and not allowed

    def sentence(self, override: str = CLI_OVERRIDE) -> str:
        """The message, with what to do about a block (``override``: how to start anyway, in the reader's terms)."""
        if not self.blocks:
            return self.message
        return f"{self.message} Make the spec smaller, or {override} to start it anyway."


OK = MemoryVerdict("ok")


def judge(
    largest: Estimate | None,
    *,
    where: str = "",
    free: int | None = None,
    total: int | None = None,
) -> MemoryVerdict:
    """The verdict on the largest estimate of one job. ``where`` names what it is for (``at num_tokens=8``);
    ``free`` and ``total`` are this machine's figures (read when None).

    A ``default`` estimate (a guess by backend and target, not from the spec) can warn but never blocks: it
    says nothing about this spec, and blocking every Neuron compile of a small machine on it would be wrong.
    """
    if largest is None:
        return OK
    free = available_bytes() if free is None else free
    total = total_bytes() if total is None else total
    need = largest.bytes
    at = f", {where}" if where else ""
    said = f"One compile may take up to {gib(need)} ({largest.origin}{at})"
    if total is not None and need > total and largest.source != "default":
        return MemoryVerdict(
            "block",
            need,
            free,
            total,
            f"{said}, more than the {gib(total)} this machine (or its container) has in all, so it cannot fit.",
        )
    if free is not None and need > free:
        return MemoryVerdict(
            "warn",
            need,
            free,
            total,
            f"{said}, more than the {gib(free)} free now: it may be slow to start, or the out-of-memory killer may "
            "end it.",
        )
    return MemoryVerdict("ok", need, free, total)


def largest(estimates: Iterable[tuple[Estimate | None, str]]) -> tuple[Estimate | None, str]:
    """The largest of (estimate, where) pairs, skipping the missing ones."""
    found = [(e, w) for e, w in estimates if e is not None]
    return max(found, key=lambda ew: ew[0].bytes) if found else (None, "")


def spec_verdict(spec: Any, backend: str = "auto", *, override_bytes: int | None = None) -> MemoryVerdict:
    """The verdict on compiling every bucket of ``spec`` (one job each) with ``backend`` (``auto`` resolved as a
    compile would); the largest bucket decides. A spec that cannot be estimated (invalid) is ``ok`` here: its
    problems are validation's to report."""
    from neffbench.jobs.cache import predicted_backend
    from neffbench.kernels import registry
    from neffbench.kernels.bucket_words import bucket_label

    resolved = predicted_backend(backend)
    kernel = registry.for_spec(spec)
    try:
        buckets = kernel.buckets(spec)
        pairs = [
            (estimate(kernel.for_bucket(spec, b), resolved, override_bytes=override_bytes), f"at {bucket_label(b)}")
            for b in buckets
        ]
    except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError):
        return OK
    found, where = largest(pairs)
    return judge(found, where=where if len(pairs) > 1 else "")


def plan_verdict(plan: Any) -> MemoryVerdict:
    """The verdict on a sweep's plan: its largest valid point decides (the limiter runs the others around it)."""
    from neffbench.views.sweep import point_number

    short = plan.short_names
    found, where = largest((p.memory, f"point {point_number(p.index)}: {p.label(short)}") for p in plan.valid)
    return judge(found, where=where if len(plan.valid) > 1 else "")
