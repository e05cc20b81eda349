"""The Structure view's rows worded once, off the GUI thread: every cell's text and sort key, each row's tooltip,
and what a search looks in. The window only copies them into its item model; the user's searches read the index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neffbench.structure import cells, diff, table
from neffbench.structure.layers import Laid


@dataclass(frozen=True)
class Heading:
    heading: str
    tip: str
    numeric: bool  # a column of figures: right-aligned


@dataclass(frozen=True)
class Row:
    path: str
    texts: tuple[str, ...]  # a cell's text per column
    keys: tuple[float | None, ...]  # the figure a column sorts by (None: nothing to sort)
    tip: str  # the module column's tooltip
    marked: bool  # a first divergent layer


@dataclass(frozen=True)
class Rows:
    laid: Laid
    columns: tuple[Heading, ...]
    rows: dict[str, Row]  # by path, in the tree's order
    children: dict[str, tuple[str, ...]]  # each module's children in call order
    parents: dict[str, str | None]
    haystack: tuple[tuple[str, str, str], ...]  # (path, what a search looks in: its path and class, lower case)

    def matching(self, text: str) -> set[str] | None:
        """The paths a search for ``text`` keeps: those whose path or class holds it, and every module above them
        (None: no search, all of them)."""
        if not text:
            return None
        wanted = text.lower()
        keep: set[str] = set()
        for path, lower, cls in self.haystack:
            if wanted in lower or wanted in cls:
                probe: str | None = path
                while probe is not None and probe not in keep:
                    keep.add(probe)
                    probe = self.parents[probe]
        return keep


@dataclass(frozen=True)
class _Side:
    """A column of the other job's figures, by path."""

    heading: str
    cell: Callable[[diff.LayerDiff | None], str]
    key: Callable[[diff.LayerDiff | None], float | None]
    tip: str


def _other_columns() -> tuple[_Side, ...]:
    def nothing(row: diff.LayerDiff | None) -> float | None:
        return None

    def change(row: diff.LayerDiff | None) -> float | None:
        return row.time_change if row else None

    return (
        _Side(
            "time B",
            lambda r: cells.duration(r.b.time.seconds) if r and r.b and r.b.time else "",
            nothing,
            "the other job's device time",
        ),
        _Side(
            "Δ time",
            lambda r: "" if change(r) is None else f"{change(r):+.1%}",
            change,
            "the other job's time against this one's",
        ),
        _Side(
            "vs float64 B",
            lambda r: cells.error(r.b.vs_float64) if r and r.b else "",
            nothing,
            "the other job's error against float64",
        ),
        _Side("what differs", lambda r: "; ".join(r.changes) if r else "", nothing, "what differs in the other job"),
    )


def _tip(laid: Laid, path: str) -> str:
    layer = laid.layers[path]
    node = layer.node
    where = f"\n{node.where}" if node.where else ""
    firsts = ", ".join(r.replace("_", " ") for r in layer.first_divergent)
    return f"{path or '(the root)'} ({node.cls}){where}" + (f"\nfirst divergent {firsts}" if firsts else "")


def rows(laid: Laid, other: Laid | None = None) -> Rows:
    """``laid``'s rows, with ``other``'s figures beside them when given."""
    have = table.groups(laid)
    own = [c for c in cells.COLUMNS if c.group in have]
    beside = {r.path: r for r in diff.diff(laid, other)} if other is not None else {}
    sides = _other_columns() if beside else ()
    columns = tuple(Heading(c.heading, c.tip, c.numeric) for c in own) + tuple(
        Heading(s.heading, s.tip, s.heading.startswith(("time", "Δ"))) for s in sides
    )
    out: dict[str, Row] = {}
    for node in laid.structure.nodes:
        layer = laid.layers[node.path]
        mine = beside.get(node.path)
        texts = tuple(c.cell(layer) for c in own) + tuple(s.cell(mine) for s in sides)
        keys: tuple[Any, ...] = tuple(c.key(layer) for c in own) + tuple(s.key(mine) for s in sides)
        out[node.path] = Row(node.path, texts, keys, _tip(laid, node.path), bool(layer.first_divergent))
    nodes = laid.structure.nodes
    return Rows(
        laid,
        columns,
        out,
        {n.path: tuple(n.children) for n in nodes},
        {n.path: n.parent for n in nodes},
        tuple((n.path, n.path.lower(), n.cls.lower()) for n in nodes),
    )
