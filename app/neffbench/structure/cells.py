"""A laid layer's figures as text: one column list, shared by ``neffbench structure``, the window and the report.

Each column has a heading, the text of a layer's cell, and a number to sort by (None: nothing to sort). Columns
whose figures a job does not have (no compare yet, no profile) are left out by whoever shows them, with a line
saying how to get them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.jobs.summary import human_bytes
from neffbench.structure.document import Node, Tensor
from neffbench.structure.layers import Layer

SHORT_DTYPES = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float64": "f64",
    "int64": "i64",
    "int32": "i32",
}


def short_tensor(t: Tensor) -> str:
    dims = ",".join(str(d) for d in t.shape)
    return f"{SHORT_DTYPES.get(t.dtype, t.dtype)}[{dims}]"


def tensors(items: tuple[Tensor, ...]) -> str:
    if not items:
        return ""
    more = f" +{len(items) - 1}" if len(items) > 1 else ""
    return short_tensor(items[0]) + more


def short_line(where: str | None) -> str:
    """``net.py:15`` of ``/home/me/net.py:15``."""
    if not where:
        return ""
    file, _, line = where.rpartition(":")
    return f"{Path(file).name}:{line}" if file else where


def call_site(node: Node, short: bool = False) -> str:
    """Where ``node`` is called, in words: the user's line, a library forward's line, or why no line is known;
    ``short``: files by name alone."""
    if node.called_at:
        library = f" (in {node.called_in}'s forward: library code, not yours)" if node.called_in else ""
        return f"called at {short_line(node.called_at) if short else node.called_at}{library}"
    if not node.path:
        return "called by the workbench's wrapper: no line of your code calls it"
    if not node.calls:
        return "never called itself (its children are)" if node.children else "never called"
    return (
        "its call line is not known: neither your code nor its parent's forward calls it (a hook or a wrapper "
        "does), or the structure was computed before library call sites were kept"
    )


def count(n: int | float | None) -> str:
    """``1,220``; ``3.2M`` and ``4.1G`` above a million."""
    if n is None:
        return ""
    n = float(n)
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{int(n):,}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def percent(share: float | None) -> str:
    """``26.6%``; a share too small for one decimal in two significant digits (``0.0018%``)."""
    if share is None:
        return ""
    return f"{share * 100:.1f}%" if share == 0 or abs(share) >= 1e-3 else f"{share * 100:.2g}%"


def times_tolerance(figures: Mapping[str, Any] | None) -> float | None:
    if not figures:
        return None
    value = figures.get("times_tolerance")
    return float(value) if isinstance(value, (int, float)) else None


def worst_error(layers: list[Layer]) -> float | None:
    """The largest error in multiples of its tolerance among ``layers`` against either reference (None: none
    compared): what colours a drawn box, a run of alike layers by its worst."""
    found = [times_tolerance(y.error(r)) for y in layers for r in ("vs_eager", "vs_float64")]
    return max((w for w in found if w is not None), default=None)


def error(figures: Mapping[str, Any] | None, first: bool = False) -> str:
    """``ok 0.003x``, ``FAIL 70.2x`` (the worst element in multiples of its tolerance), or why it was not compared."""
    if not figures:
        return ""
    if figures.get("ok") is None:
        return "not compared"
    times = times_tolerance(figures)
    shown = "" if times is None else ("inf" if math.isinf(times) else f"{times:.3g}x")
    word = "ok" if figures.get("ok") else "FAIL"
    return f"{word} {shown}".strip() + (" ◀ first" if first else "")


@dataclass(frozen=True)
class Column:
    heading: str
    cell: Callable[[Layer], str]
    key: Callable[[Layer], float | None]
    group: str  # "structure", "error" or "time": which figures it needs
    tip: str = ""

    @property
    def numeric(self) -> bool:
        """A column of figures: right-aligned."""
        return self.heading in NUMERIC


NUMERIC = {"params", "weights", "FLOPs", "bytes", "ops", "time", "share", "of peak", "HBM"}


def _time_key(layer: Layer) -> float | None:
    return layer.time.seconds if layer.time else None


COLUMNS: tuple[Column, ...] = (
    Column("module", lambda y: y.node.name if y.node.path else y.node.cls, lambda y: None, "structure"),
    Column("class", lambda y: y.node.cls, lambda y: None, "structure"),
    Column(
        "in → out",
        lambda y: f"{tensors(y.node.inputs)} → {tensors(y.node.outputs)}" if y.node.calls else "",
        lambda y: None,
        "structure",
        "the first call's first input and output (dtype[shape]); +N: more of them",
    ),
    Column(
        "time", lambda y: duration(y.time.seconds) if y.time else "", _time_key, "time", "device time in the profile"
    ),
    Column(
        "share",
        lambda y: percent(y.time.share) if y.time else "",
        lambda y: y.time.share if y.time else None,
        "time",
        "of the NEFF's total time in the profile",
    ),
    Column(
        "vs eager",
        lambda y: error(y.vs_eager, "vs_eager" in y.first_divergent),
        lambda y: times_tolerance(y.vs_eager),
        "error",
        "the latest compare: the worst element's error against the eager run, in multiples of its tolerance",
    ),
    Column(
        "vs float64",
        lambda y: error(y.vs_float64, "vs_float64" in y.first_divergent),
        lambda y: times_tolerance(y.vs_float64),
        "error",
        "the latest compare: the worst element's error against a float64 run, in multiples of its tolerance",
    ),
    Column("params", lambda y: count(y.node.params) if y.node.params else "", lambda y: y.node.params, "structure"),
    Column(
        "FLOPs",
        lambda y: count(y.node.flops) if y.node.flops else "",
        lambda y: y.node.flops,
        "structure",
        "torch's FlopCounterMode over all its calls (matrix products, convolutions, attention)",
    ),
    Column(
        "weights",
        lambda y: (
            human_bytes(y.node.param_bytes + y.node.buffer_bytes) if y.node.param_bytes + y.node.buffer_bytes else ""
        ),
        lambda y: y.node.param_bytes + y.node.buffer_bytes,
        "structure",
        "bytes of its parameters and buffers",
    ),
    Column(
        "bytes",
        lambda y: human_bytes(y.node.bytes) if y.node.bytes else "",
        lambda y: y.node.bytes,
        "structure",
        "what its calls read and write at least: its weights, inputs and outputs",
    ),
    Column(
        "ops",
        lambda y: str(y.node.op_total) if y.node.op_total else "",
        lambda y: y.node.op_total,
        "structure",
        "operations of the traced graph under it",
    ),
    Column(
        "of peak",
        lambda y: percent(y.time.peak_share) if y.time else "",
        lambda y: y.time.peak_share if y.time else None,
        "time",
        "achieved FLOP/s (its FLOPs over its device time) against the target's documented peak",
    ),
    Column(
        "HBM",
        lambda y: human_bytes(y.time.hbm_bytes) if y.time and y.time.hbm_bytes else "",
        lambda y: y.time.hbm_bytes if y.time else None,
        "time",
        "bytes read from and written to HBM in the profile",
    ),
    Column(
        "line",
        lambda y: short_line(y.node.where),
        lambda y: None,
        "structure",
        "where it is called: your code's line, else the library forward's that calls it, else its class's forward",
    ),
)


def engines(layer: Layer) -> str:
    """``tensor 12, vector 30``: its instructions by engine in the profile."""
    if not layer.time:
        return ""
    return ", ".join(f"{e} {n:,}" for e, n in layer.time.instructions.items() if n)
