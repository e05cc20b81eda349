"""The data flow between a module's children: who feeds whom, read from the traced graph's operations.

The vertices are the module's children (a container's children in its place: a ``ModuleList`` does nothing
itself), each of its own operations (the residual ``add`` of a block), and where values come in and go out (the
graph's inputs and outputs for the root; ``in`` and ``out`` for any other module). An edge joins two vertices
when an operation of the second reads a value the first made.

A run of alike siblings (the 32 decoder layers of a Llama: one class, the same shapes and parameters, called one
after another) is one vertex, ``layers.0 … layers.31`` of ``32 × LlamaDecoderLayer``, as Model Explorer and Netron
fold repeated blocks: the level stays readable and its layout small. A run named in ``expanded`` is drawn whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neffbench.structure.document import Node, Structure

MAX_VERTICES = 300  # more than a drawing can show: the view says so and offers the children instead
MIN_RUN = 3  # alike siblings drawn as one vertex from this many: two still read well side by side


@dataclass(frozen=True)
class Vertex:
    id: str
    kind: str  # "module", "op", "input", "output"
    label: str
    path: str | None = None  # a module vertex's module; an op vertex's module (the one drawn)
    detail: str = ""  # the class of a module, the kind of an operation
    members: tuple[str, ...] = ()  # a run's modules, in call order (its path is the first's)

    @property
    def run(self) -> bool:
        """A run of alike siblings drawn as one vertex."""
        return len(self.members) > 1


@dataclass(frozen=True)
class Flow:
    path: str
    vertices: tuple[Vertex, ...]
    edges: tuple[tuple[str, str], ...]
    note: str | None = None  # why it is not drawn whole (too many vertices), or has no edges (not traced)
    by_id: dict[str, Vertex] = field(default_factory=dict, compare=False, repr=False)


def _alike(node: Node) -> tuple[object, ...] | None:
    """What two siblings share to be drawn as one run (None: a module never called, drawn alone)."""
    if not node.calls:
        return None
    return (node.cls, node.inputs, node.outputs, node.params, node.op_total, node.calls)


def runs(structure: Structure, children: tuple[str, ...], expanded: frozenset[str] = frozenset()) -> list[list[str]]:
    """``children`` in groups: each run of at least ``MIN_RUN`` consecutive alike siblings one group (unless its
    first is in ``expanded``), every other child a group of its own."""
    groups: list[list[str]] = []
    for child in children:
        key = _alike(structure.by_path[child])
        last = groups[-1] if groups else None
        if last is not None and key is not None and _alike(structure.by_path[last[0]]) == key:
            last.append(child)
        else:
            groups.append([child])
    out: list[list[str]] = []
    for group in groups:
        whole = len(group) < MIN_RUN or group[0] in expanded
        out.extend([[child] for child in group] if whole else [group])
    return out


def flow(structure: Structure, path: str, limit: int = MAX_VERTICES, expanded: frozenset[str] = frozenset()) -> Flow:
    """The data flow between the children of ``path``; runs of alike children as one vertex each, but those whose
    first module is in ``expanded``."""
    children = structure.flow_children(path)
    child_set = set(children)
    inside = (path + ".") if path else ""
    root = not path
    groups = runs(structure, children, expanded)
    vertex_of = {child: f"module:{group[0]}" for group in groups for child in group}

    def owner(op_path: str) -> str | None:
        """The vertex an operation at ``op_path`` belongs to, at this level; None outside ``path``."""
        if op_path == path:
            return None  # the module's own operation: a vertex of its own (by index)
        if not root and not op_path.startswith(inside):
            return "outside"
        probe = op_path
        while probe and probe not in child_set:
            probe = probe.rpartition(".")[0]
        return vertex_of[probe] if probe else None

    vertices: dict[str, Vertex] = {}
    for group in groups:
        first, last = group[0], group[-1]
        cls = structure.by_path[first].cls
        key = f"module:{first}"
        if len(group) == 1:
            vertices[key] = Vertex(key, "module", first[len(inside) :], first, cls)
        else:
            label = f"{first[len(inside) :]} … {last[len(inside) :]}"
            vertices[key] = Vertex(key, "module", label, first, f"{len(group)} × {cls}", tuple(group))
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
