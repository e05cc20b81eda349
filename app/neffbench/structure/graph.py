"""(torch) The traced graph's operations, each with the module that ran it and the operations it reads.

``torch.jit.trace`` records, for every node of its graph, the scope of the module call it came from
(``__module.inner/__module.inner.layers.0/__module.inner.layers.0.fc1``); the last part is the module's path as
``named_modules()`` names it, behind the wrapper's prefix. Plumbing nodes (constants, attribute reads, list and
tuple packing, sizes) are no operations of their own: a value passed through them is read from where it was made.
"""

from __future__ import annotations

from typing import Any

# Nodes that move or describe values without computing any: seen through, never listed.
_PLUMBING = {"aten::size", "aten::Int", "aten::ScalarImplicit", "aten::numel", "aten::dim", "aten::detach"}


def module_path(scope: str, prefix: str) -> str:
    """The user's module path of a jit scope (``""``: the user's root module, or the wrapper around it)."""
    last = scope.rpartition("/")[2]
    if last.startswith("__module"):
        last = last[len("__module") :].lstrip(".")
    if prefix and (last + ".").startswith(prefix):
        return last[len(prefix) :]
    return "" if prefix else last


def graph_ops(traced: Any, prefix: str) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """The operations of ``traced`` (a ``torch.jit.trace`` result) as ``{"op", "path", "in"}`` in graph order, and
    what each graph output reads. ``in`` names operations by index and the graph's inputs as ``-1 - k``."""
    graph = traced.inlined_graph if hasattr(traced, "inlined_graph") else traced.graph
    made_by: dict[int, frozenset[int]] = {}
    inputs = list(graph.inputs())
    # A module's graph takes the module itself first; a function's only its tensors.
    skip = 1 if inputs and inputs[0].type().kind() == "ClassType" else 0
    for k, value in enumerate(inputs[skip:]):
        made_by[value.unique()] = frozenset({-1 - k})
    ops: list[dict[str, Any]] = []
    for node in graph.nodes():
        kind = node.kind()
        read = frozenset().union(*(made_by.get(v.unique(), frozenset()) for v in node.inputs()))
        if kind.startswith("prim::") or kind in _PLUMBING:
            for out in node.outputs():
                made_by[out.unique()] = read
            continue
        index = len(ops)
        ops.append({"op": kind, "path": module_path(node.scopeName(), prefix), "in": sorted(read)})
        for out in node.outputs():
            made_by[out.unique()] = frozenset({index})
    outputs = [sorted(made_by.get(v.unique(), frozenset())) for v in graph.return_node().inputs()]
    # A module returning a tuple returns one TupleConstruct: its parts are the graph's outputs.
    ret = list(graph.return_node().inputs())
    if len(ret) == 1 and ret[0].node().kind() == "prim::TupleConstruct":
        outputs = [sorted(made_by.get(v.unique(), frozenset())) for v in ret[0].node().inputs()]
    return ops, outputs
