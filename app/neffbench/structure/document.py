"""``JOB/structure.json`` read: the module tree as frozen nodes, the traced graph's operations, and what it was
computed from. Written once by :mod:`neffbench.structure.capture`; every later reader goes through :func:`load`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.views.fields import RecordError, as_dict, as_list, integer, mapping_of, number, schema_version_of, text

FILE_NAME = "structure.json"
SCHEMA_VERSION = 1


class StructureError(RecordError):
    """A structure.json that cannot be read; one sentence saying why."""


@dataclass(frozen=True)
class Tensor:
    """One input or output of a module call: its dtype and shape (``name`` for a keyword argument)."""

    dtype: str
    shape: tuple[int, ...]
    name: str | None = None

    def __str__(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{self.name + '=' if self.name else ''}{self.dtype}[{dims}]"

    @classmethod
    def of(cls, data: Any) -> Tensor:
        data = as_dict(data)
        shape = tuple(int(d) for d in as_list(data.get("shape")) if isinstance(d, int))
        return cls(text(data.get("dtype")) or "?", shape, text(data.get("name")))


@dataclass(frozen=True)
class Node:
    """One module of the tree, as ``named_modules()`` names it (the root is ``""``).

    ``calls``: how often the forward called it (0: never, a container such as a ``ModuleList``); the shapes are its
    first call's. ``params`` and ``param_bytes`` count every parameter under it once, as ``parameters()`` does;
    ``flops`` are torch's FlopCounterMode's for all its calls, children included; ``bytes`` what its calls read and
    wrote at least (its weights, inputs and outputs). ``ops``: the traced graph's operations that ran in it and not
    in a child, by kind; ``op_total`` those of its whole subtree.
    """

    path: str
    cls: str
    calls: int = 0
    order: int | None = None
    inputs: tuple[Tensor, ...] = ()
    outputs: tuple[Tensor, ...] = ()
    params: int = 0
    param_bytes: int = 0
    buffer_bytes: int = 0
    flops: int = 0
    bytes: int = 0
    defined_at: str | None = None
    called_at: str | None = None
    called_in: str | None = None  # the library class whose forward holds ``called_at`` (None: the user's code)
    ops: Mapping[str, int] = field(default_factory=dict)
    op_total: int = 0
    parent: str | None = None
    children: tuple[str, ...] = ()
    depth: int = 0

    @property
    def name(self) -> str:
        """The last part of its path (``fc1`` of ``layers.0.fc1``); the root's class for the root."""
        return self.path.rpartition(".")[2] if self.path else self.cls

    @property
    def container(self) -> bool:
        """A module the forward never calls but whose children it does (a ``ModuleList``): no level of its own."""
        return self.calls == 0 and bool(self.children)

    @property
    def where(self) -> str | None:
        """The line a user knows it by: where their code called it, else where its class's forward is."""
        return self.called_at or self.defined_at


@dataclass(frozen=True)
class Op:
    """One operation of the traced graph: its kind (``aten::linear``), the module it ran in, and what it reads
    (other operations by index; ``-1 - k`` is the graph's input ``k``)."""

    index: int
    kind: str
    path: str
    reads: tuple[int, ...]


@dataclass(frozen=True)
class Structure:
    nodes: tuple[Node, ...]
    ops: tuple[Op, ...]
    graph_outputs: tuple[tuple[int, ...], ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    computed: str | None = None
    how: str | None = None
    traced: bool = False
    trace_note: str | None = None
    weights_sha256: str | None = None
    path: Path | None = None
    by_path: Mapping[str, Node] = field(default_factory=dict, compare=False, repr=False)

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def node(self, path: str) -> Node | None:
        return self.by_path.get(path)

    def flow_children(self, path: str) -> tuple[str, ...]:
        """The children whose data flow a drawing of ``path`` shows: its children, a container's replaced by its
        own (a ``ModuleList`` does nothing itself; its layers do)."""
        out: list[str] = []
        node = self.by_path.get(path)
        for child in node.children if node else ():
            sub = self.by_path[child]
            out.extend(self.flow_children(child) if sub.container else (child,))
        return tuple(out)

    def subtree(self, path: str) -> list[Node]:
        """``path`` and every node below it, in the tree's order."""
        node = self.by_path.get(path)
        if node is None:
            return []
        out = [node]
        for child in node.children:
            out.extend(self.subtree(child))
        return out

    def shown(self, depth: int | None) -> list[Node]:
        """The nodes down to ``depth`` called levels (None: all), with the containers above them."""
        if depth is None:
            return list(self.nodes)
        keep = {n.path for n in self.nodes if n.depth <= depth and not n.container}
        for node in self.nodes:  # a container is shown when something under it is
            if node.container and any(p.startswith(node.path + ".") for p in keep):
                keep.add(node.path)
        return [n for n in self.nodes if n.path in keep]


def parent_of(path: str) -> str | None:
    if not path:
        return None
    return path.rpartition(".")[0]


def load(job_dir: str | Path) -> Structure | None:
    """The job's structure; None when it has none (a job from before structures, or one whose build never ran)."""
    path = Path(job_dir) / FILE_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StructureError(f"cannot read {path}: {exc}") from None
    return of(data, path)


def of(data: Any, path: Path | None = None) -> Structure:
    """A structure from its document (as ``capture`` writes it)."""
    where = str(path or FILE_NAME)
    try:
        data = mapping_of(data, where, "structure")
        schema_version_of(data, where, SCHEMA_VERSION, "structure")
    except RecordError as exc:
        raise StructureError(str(exc)) from None
    raw = [as_dict(n) for n in as_list(data.get("nodes"))]
    if not raw or raw[0].get("path") != "":
        raise StructureError(f"{where} has no root module")
    children: dict[str, list[str]] = {}
    for n in raw[1:]:
        children.setdefault(parent_of(str(n.get("path"))) or "", []).append(str(n.get("path")))
    depths: dict[str, int] = {"": 0}
    nodes: list[Node] = []
    for n in raw:
        p = str(n.get("path") or "")
        parent = parent_of(p)
        calls = integer(n.get("calls")) or 0
        if parent is not None:
            depths[p] = depths[parent] + (1 if calls else 0)
        nodes.append(
            Node(
                path=p,
                cls=text(n.get("class")) or "?",
                calls=calls,
                order=integer(n.get("order")),
                inputs=tuple(Tensor.of(t) for t in as_list(n.get("inputs"))),
                outputs=tuple(Tensor.of(t) for t in as_list(n.get("outputs"))),
                params=integer(n.get("params")) or 0,
                param_bytes=integer(n.get("param_bytes")) or 0,
                buffer_bytes=integer(n.get("buffer_bytes")) or 0,
                flops=int(number(n.get("flops")) or 0),
                bytes=integer(n.get("bytes")) or 0,
                defined_at=text(n.get("defined_at")),
                called_at=text(n.get("called_at")),
                called_in=text(n.get("called_in")),
                ops={str(k): int(v) for k, v in as_dict(n.get("ops")).items() if isinstance(v, int)},
                op_total=integer(n.get("op_total")) or 0,
                parent=parent,
                children=tuple(children.get(p, ())),
                depth=depths[p],
            )
        )
    ops = tuple(
        Op(i, str(o.get("op") or "?"), str(o.get("path") or ""), tuple(int(r) for r in as_list(o.get("in"))))
        for i, o in enumerate(as_dict(op) for op in as_list(data.get("ops")))
    )
    graph = as_dict(data.get("graph"))
    return Structure(
        nodes=tuple(nodes),
        ops=ops,
        graph_outputs=tuple(tuple(int(r) for r in as_list(o)) for o in as_list(data.get("graph_outputs"))),
        inputs=tuple(Tensor.of(t) for t in as_list(data.get("inputs"))),
        outputs=tuple(Tensor.of(t) for t in as_list(data.get("outputs"))),
        computed=text(data.get("computed")),
        how=text(data.get("how")),
        traced=bool(graph.get("traced")),
        trace_note=text(graph.get("note")),
        weights_sha256=text(data.get("weights_sha256")),
        path=path,
        by_path={n.path: n for n in nodes},
    )
