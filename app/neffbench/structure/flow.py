"""The data flow between a module's children: who feeds whom, read from the traced graph's operations.

The vertices are the module's children (a container's children in its place: a ``ModuleList`` does nothing
itself), each of its own operations (the residual ``add`` of a block), and where values come in and go out (the
graph's inputs and outputs for the root; ``in`` and ``out`` for any other module). An edge joins two vertices
when an operation of the second reads a value the first made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neffbench.structure.document import Structure

MAX_VERTICES = 300  # more than a drawing can show: the view says so and offers the children instead


@dataclass(frozen=True)
class Vertex:
    id: str
    kind: str  # "module", "op", "input", "output"
    label: str
    path: str | None = None  # a module vertex's module; an op vertex's module (the one drawn)
    detail: str = ""  # the class of a module, the kind of an operation


@dataclass(frozen=True)
class Flow:
    path: str
    vertices: tuple[Vertex, ...]
    edges: tuple[tuple[str, str], ...]
    note: str | None = None  # why it is not drawn whole (too many vertices), or has no edges (not traced)
    by_id: dict[str, Vertex] = field(default_factory=dict, compare=False, repr=False)


def flow(structure: Structure, path: str, limit: int = MAX_VERTICES) -> Flow:
    """The data flow between the children of ``path``."""
    children = structure.flow_children(path)
    child_set = set(children)
    inside = (path + ".") if path else ""
    root = not path

    def owner(op_path: str) -> str | None:
        """The vertex an operation at ``op_path`` belongs to, at this level; None outside ``path``."""
        if op_path == path:
            return None  # the module's own operation: a vertex of its own (by index)
        if not root and not op_path.startswith(inside):
            return "outside"
        probe = op_path
        while probe and probe not in child_set:
            probe = probe.rpartition(".")[0]
        return f"module:{probe}" if probe else None

    vertices: dict[str, Vertex] = {}
    for child in children:
        node = structure.by_path[child]
        vertices[f"module:{child}"] = Vertex(f"module:{child}", "module", child[len(inside) :], child, node.cls)
    if root:
        for k, t in enumerate(structure.inputs):
            vertices[f"input{k}"] = Vertex(f"input{k}", "input", t.name or f"input {k}", detail=str(t))
        for k, t in enumerate(structure.outputs):
            vertices[f"output{k}"] = Vertex(f"output{k}", "output", t.name or f"output {k}", detail=str(t))
    else:
        vertices["in"] = Vertex("in", "input", "in")
        vertices["out"] = Vertex("out", "output", "out")
    where: dict[int, str] = {}  # op index -> its vertex at this level ("outside" for another module's)
    for op in structure.ops:
        owned = owner(op.path)
        if owned is None and (op.path == path):
            where[op.index] = f"op{op.index}"
            vertices[f"op{op.index}"] = Vertex(f"op{op.index}", "op", op.kind.replace("aten::", ""), op.path, op.kind)
        elif owned is not None:
            where[op.index] = owned
    note = None
    if len(vertices) > limit:
        return Flow(
            path,
            (),
            (),
            f"{len(vertices)} modules and operations: too many to draw; choose one of its children",
        )
    edges: set[tuple[str, str]] = set()

    def source(read: int) -> str | None:
        if read < 0:
            return f"input{-1 - read}" if root else "in"
        found = where.get(read)
        return "in" if found == "outside" else found

    for op in structure.ops:
        target = where.get(op.index)
        if target is None:
            continue
        for read in op.reads:
            src = source(read)
            if src is None:
                continue
            if target == "outside":
                if src not in ("in", "outside") and not src.startswith("input"):
                    edges.add((src, "out"))  # a value made here, read outside
                continue
            if src != target:
                edges.add((src, target))
    for k, reads in enumerate(structure.graph_outputs):
        for read in reads:
            src = source(read)
            if src is not None and src != "in":
                edges.add((src, f"output{k}" if root else "out"))
    if not structure.traced:
        note = structure.trace_note or "the module was not traced: its data flow is not known"
    kept = {v for e in edges for v in e} | {k for k, v in vertices.items() if v.kind in ("module", "op")}
    ordered = tuple(v for k, v in vertices.items() if k in kept or v.kind in ("input", "output"))
    return Flow(path, ordered, tuple(sorted(edges)), note, {v.id: v for v in ordered})
