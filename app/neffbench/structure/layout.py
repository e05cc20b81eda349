"""A data flow laid out for drawing: grandalf's Sugiyama layered layout (ranks top to bottom, crossings reduced,
edges routed through the ranks they cross), in plain numbers the window and the HTML report both draw from, and
as JSON for the window's layout child.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neffbench.structure.flow import Flow

CHAR_W, LINE_H, PAD = 7.0, 16.0, 10.0  # a label's size estimate, in the drawing's units (about pixels)
H_SPACE, V_SPACE, COMPONENT_GAP = 24.0, 36.0, 40.0


@dataclass(frozen=True)
class Box:
    id: str
    x: float  # centre
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Laid:
    boxes: dict[str, Box]
    edges: tuple[tuple[str, str, tuple[tuple[float, float], ...]], ...]  # (from, to, points from tail to head)
    width: float
    height: float


def size(label: str, detail: str = "") -> tuple[float, float]:
    lines = [label, detail] if detail else [label]
    return max(len(t) for t in lines) * CHAR_W + 2 * PAD, len(lines) * LINE_H + PAD


class _View:
    """What grandalf reads and writes on a vertex: its size in, its centre out."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[Any]) -> None:
        self.points = [(float(x), float(y)) for x, y in points]


def sized(flow: Flow) -> dict[str, Any]:
    """What laying ``flow`` out needs, as JSON: each vertex's id and size, in order, and the edges."""
    return {
        "vertices": [[v.id, *size(v.label, v.detail if v.kind == "module" else "")] for v in flow.vertices],
        "edges": [[a, b] for a, b in flow.edges],
    }


def layout(flow: Flow) -> Laid:
    """Positions for every vertex of ``flow`` and a polyline for every edge; components side by side."""
    return arrange(sized(flow))


def arrange(graph: dict[str, Any]) -> Laid:
    """A ``sized()`` flow laid out, in this process (``layout_child`` lays out in another)."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout
    from grandalf.routing import route_with_lines

    vertices = {}
    for id_, w, h in graph["vertices"]:
        vertices[id_] = Vertex(id_)
        vertices[id_].view = _View(w, h)
    edges = []
    for a, b in graph["edges"]:
        if a in vertices and b in vertices:
            e = Edge(vertices[a], vertices[b])
            e.view = _EdgeView()
            edges.append(e)
    g = Graph(list(vertices.values()), edges)
    boxes: dict[str, Box] = {}
    routed: list[tuple[str, str, tuple[tuple[float, float], ...]]] = []
    offset = 0.0
    height = 0.0
    for component in g.C:
        sug = SugiyamaLayout(component)
        sug.xspace, sug.yspace = H_SPACE, V_SPACE
        sug.route_edge = route_with_lines
        roots = [v for v in component.sV if len(v.e_in()) == 0]
        sug.init_all(roots=roots or None)
        sug.draw()
        xs = [v.view.xy[0] - v.view.w / 2 for v in component.sV]
        left = min(xs) if xs else 0.0
        right = max(v.view.xy[0] + v.view.w / 2 for v in component.sV) if xs else 0.0
        top = min(v.view.xy[1] - v.view.h / 2 for v in component.sV) if xs else 0.0
        for v in component.sV:
            x, y = v.view.xy
            boxes[v.data] = Box(v.data, x - left + offset, y - top, v.view.w, v.view.h)
            height = max(height, y - top + v.view.h / 2)
        for e in component.sE:
            points = tuple((x - left + offset, y - top) for x, y in e.view.points)
            routed.append((e.v[0].data, e.v[1].data, points))
        offset += right - left + COMPONENT_GAP
    return Laid(boxes, tuple(routed), max(0.0, offset - COMPONENT_GAP), height)


def to_json(laid: Laid) -> dict[str, Any]:
    """``laid`` as JSON (``from_json`` reads it back)."""
    return {
        "boxes": [[b.id, b.x, b.y, b.w, b.h] for b in laid.boxes.values()],
        "edges": [[a, b, [list(p) for p in points]] for a, b, points in laid.edges],
        "width": laid.width,
        "height": laid.height,
    }


def from_json(data: dict[str, Any]) -> Laid:
    boxes = {id_: Box(id_, x, y, w, h) for id_, x, y, w, h in data["boxes"]}
    edges = tuple((a, b, tuple((x, y) for x, y in points)) for a, b, points in data["edges"])
    return Laid(boxes, edges, data["width"], data["height"])
