"""Two jobs compared layer by layer: per module path, its structure, error and device time in A and in B, and what
changed. Modules are matched by path (``named_modules()``'s); one only one job has is listed as added or gone.

A layer *differs* when its own structure does (class, first call's inputs and outputs, its own parameters or
traced operations), when its verdict against a reference flips, or when its device time moves by more than
``TIME_CHANGE`` of A's. A parent whose figures differ only because a child's do is not counted again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neffbench.structure import cells
from neffbench.structure.layers import REFERENCES, Laid, Layer

TIME_CHANGE = 0.05  # a profile's layer times move by a few percent from one run to the next


@dataclass(frozen=True)
class LayerDiff:
    path: str
    a: Layer | None
    b: Layer | None
    changes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def differs(self) -> bool:
        return bool(self.changes)

    @property
    def time_change(self) -> float | None:
        ta, tb = (x.time.seconds if x is not None and x.time else None for x in (self.a, self.b))
        return (tb - ta) / ta if ta and tb is not None else None


def _own_params(layer: Layer, laid: Laid) -> int:
    node = layer.node
    return node.params - sum(laid.structure.by_path[c].params for c in node.children)


def _changes(path: str, a: Layer | None, b: Layer | None, la: Laid, lb: Laid) -> tuple[str, ...]:
    if a is None or b is None:
        return ("only in B",) if a is None else ("only in A",)
    na, nb = a.node, b.node
    out = []
    if na.cls != nb.cls:
        out.append(f"class {na.cls} → {nb.cls}")
    if na.inputs != nb.inputs or na.outputs != nb.outputs:
        out.append(
            f"in → out {cells.tensors(na.inputs)} → {cells.tensors(na.outputs)} became "
            f"{cells.tensors(nb.inputs)} → {cells.tensors(nb.outputs)}"
        )
    pa, pb = _own_params(a, la), _own_params(b, lb)
    if pa != pb:
        out.append(f"own parameters {pa:,} → {pb:,}")
    if dict(na.ops) != dict(nb.ops):
        out.append(f"own operations {sum(na.ops.values())} → {sum(nb.ops.values())}")
    for reference in REFERENCES:
        ea, eb = a.error(reference), b.error(reference)
        if ea and eb and ea.get("ok") is not None and eb.get("ok") is not None and ea.get("ok") != eb.get("ok"):
            out.append(f"{reference.replace('_', ' ')} {cells.error(ea)} → {cells.error(eb)}")
    ta, tb = (x.time.seconds if x.time else None for x in (a, b))
    if ta and tb is not None and abs(tb - ta) > TIME_CHANGE * ta:
        out.append(f"time {cells.duration(ta)} → {cells.duration(tb)} ({(tb - ta) / ta:+.1%})")
    return tuple(out)


def diff(a: Laid, b: Laid) -> list[LayerDiff]:
    """Every module of A then those only B has, each with what changed."""
    paths = [n.path for n in a.structure.nodes]
    paths += [n.path for n in b.structure.nodes if n.path not in a.layers]
    return [
        LayerDiff(p, a.layers.get(p), b.layers.get(p), _changes(p, a.layers.get(p), b.layers.get(p), a, b))
        for p in paths
    ]


def _depth(row: LayerDiff) -> int:
    return (row.a or row.b).node.depth  # type: ignore[union-attr]


def folded(rows: list[LayerDiff], depth: int | None) -> list[LayerDiff]:
    """The modules down to ``depth`` (None: all), each also saying what differs in the modules under it that are not
    shown (``under it: mlp.up: own parameters 144 → 288``)."""
    if depth is None:
        return rows
    shown = [r for r in rows if _depth(r) <= depth and not (r.a or r.b).node.container]  # type: ignore[union-attr]
    out = []
    for row in shown:
        prefix = row.path + "." if row.path else ""
        under = [
            r
            for r in rows
            if r.differs and r.path.startswith(prefix) and r.path != row.path and _depth(r) > depth and r.path
        ]
        notes = [f"{r.path[len(prefix) :]}: {'; '.join(r.changes)}" for r in under[:2]]
        if len(under) > 2:
            notes.append(f"and {len(under) - 2} more")
        extra = (f"under it: {' | '.join(notes)}",) if notes else ()
        out.append(LayerDiff(row.path, row.a, row.b, row.changes + extra))
    return out


def lines(rows: list[LayerDiff], name_a: str, name_b: str, *, every: bool = False) -> list[str]:
    """The differing layers (``every``: all of them) as a table, after a line saying how many differ."""
    differing = [r for r in rows if r.differs and r.path]
    modules = len([r for r in rows if r.path])
    head = f"layers of A ({name_a}) and B ({name_b}): " + (
        f"{len(differing)} of {modules} modules differ" if differing else f"all {modules} modules alike"
    )
    shown = [r for r in rows if r.path and (every or r.differs)]
    if not shown:
        return [head]
    headers = [
        "module",
        "class",
        "time A",
        "time B",
        "change",
        "vs eager A",
        "vs eager B",
        "vs float64 A",
        "vs float64 B",
        "what differs",
    ]
    table = []
    for r in shown:
        node = (r.a or r.b).node  # type: ignore[union-attr]
        change = r.time_change
        table.append(
            [
                r.path,
                node.cls,
                cells.duration(r.a.time.seconds) if r.a and r.a.time else "",
                cells.duration(r.b.time.seconds) if r.b and r.b.time else "",
                "" if change is None else f"{change:+.1%}",
                cells.error(r.a.vs_eager) if r.a else "",
                cells.error(r.b.vs_eager) if r.b else "",
                cells.error(r.a.vs_float64) if r.a else "",
                cells.error(r.b.vs_float64) if r.b else "",
                "; ".join(r.changes) or "(alike)",
            ]
        )
    keep = [i for i in range(len(headers)) if i in (0, 1, 9) or any(row[i] for row in table)]
    headers = [headers[i] for i in keep]
    table = [[row[i] for i in keep] for row in table]
    widths = [max(len(row[i]) for row in [headers, *table]) for i in range(len(headers))]
    out = [head, ""]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [headers, *table]]
    return out


def document(rows: list[LayerDiff], name_a: str, name_b: str) -> dict[str, Any]:
    def side(layer: Layer | None) -> dict[str, Any] | None:
        if layer is None:
            return None
        return {
            "class": layer.node.cls,
            "params": layer.node.params,
            "flops": layer.node.flops,
            "time_s": layer.time.seconds if layer.time else None,
            "vs_eager": dict(layer.vs_eager) if layer.vs_eager else None,
            "vs_float64": dict(layer.vs_float64) if layer.vs_float64 else None,
        }

    return {
        "a": name_a,
        "b": name_b,
        "differ": [r.path for r in rows if r.differs and r.path],
        "layers": [
            {"path": r.path, "a": side(r.a), "b": side(r.b), "time_change": r.time_change, "changes": list(r.changes)}
            for r in rows
        ],
    }
