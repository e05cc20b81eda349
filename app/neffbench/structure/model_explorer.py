"""A job's structure in Google's Model Explorer: its graph JSON and node-data files, and the server that shows them.

The graph is Model Explorer's adapter output (``{"graphs": [{"id", "nodes": [...]}]}``; each node ``id``,
``label``, ``namespace`` as ``a/b/c``, ``attrs``, ``incomingEdges``, ``outputsMetadata``: google-ai-edge/model-explorer
``graph_builder.py``). A node is a module without called children (its operations are its own), or an operation of
a module that has children (a residual ``add`` in a block); its namespace is its module's path, so Model Explorer
nests the layers as the tree does. Node data (``node_data_builder.py``: ``{graph_id: {"results": {node_id:
{"value"}}, "gradient"}}``) are one file per figure: error against float64 and against eager (the worst element in
multiples of its tolerance), device time (µs) and FLOPs, each a module's own figure on the module's node.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from neffbench.structure.cells import short_tensor, times_tolerance
from neffbench.structure.document import Structure
from neffbench.structure.layers import Laid

GRADIENT = [{"stop": 0, "bgColor": "#f7fbff"}, {"stop": 1, "bgColor": "#d7301f"}]
FIGURES = ("error vs float64 (x tolerance)", "error vs eager (x tolerance)", "device time (us)", "FLOPs")


def _leaves(structure: Structure) -> set[str]:
    """Modules that call no other module: a node each."""
    called_children = {n.parent for n in structure.nodes if n.calls and n.parent is not None}
    parents: set[str] = set()
    for start in called_children:
        path: str | None = start
        while path is not None:  # a container's parent calls what the container holds
            parents.add(path)
            node = structure.by_path.get(path)
            if node is None or not node.container:
                break
            path = node.parent
    return {n.path for n in structure.nodes if n.calls and n.path not in parents}


def _namespace(path: str) -> str:
    return "/".join(path.split(".")) if path else ""


def graph(laid: Laid, graph_id: str) -> dict[str, Any]:
    s = laid.structure
    leaves = _leaves(s)

    def unit_of(path: str) -> str | None:
        """The leaf module an operation in ``path`` belongs to, or None when it runs in a module with children."""
        probe = path
        while probe:
            if probe in leaves:
                return probe
            probe = probe.rpartition(".")[0]
        return path if path in leaves else None

    ids: dict[int, str] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for k, tensor in enumerate(s.inputs):
        nodes[f"input{k}"] = {
            "id": f"input{k}",
            "label": tensor.name or f"input {k}",
            "namespace": "",
            "attrs": [{"key": "tensor", "value": short_tensor(tensor)}],
            "incomingEdges": [],
            "outputsMetadata": [{"id": "0", "attrs": [{"key": "shape", "value": short_tensor(tensor)}]}],
        }
    for op in s.ops:
        unit = unit_of(op.path)
        node_id = f"module:{unit}" if unit is not None else f"op{op.index}"
        ids[op.index] = node_id
        if node_id in nodes:
            continue
        node = s.by_path.get(unit if unit is not None else op.path)
        if unit is not None and node is not None:  # a leaf module, in its parent's group
            label, namespace = node.name, _namespace(node.parent or "")
        else:  # an operation of a module with children, in that module's group
            label, namespace = op.kind.replace("aten::", ""), _namespace(op.path)
        attrs = [{"key": "module", "value": (unit if unit is not None else op.path) or "(root)"}]
        if node is not None and unit is not None:
            attrs += [{"key": "class", "value": node.cls}, {"key": "params", "value": str(node.params)}]
            if node.where:
                attrs.append({"key": "line", "value": node.where})
        nodes[node_id] = {
            "id": node_id,
            "label": label,
            "namespace": namespace,
            "attrs": attrs,
            "incomingEdges": [],
            "outputsMetadata": [
                {
                    "id": "0",
                    "attrs": [{"key": "shape", "value": short_tensor(t)} for t in (node.outputs if node else ())],
                }
            ],
        }
    for op in s.ops:
        target = nodes[ids[op.index]]
        for source in op.reads:
            source_id = f"input{-1 - source}" if source < 0 else ids.get(source)
            if source_id is None or source_id == target["id"] or source_id not in nodes:
                continue
            edge = {
                "sourceNodeId": source_id,
                "sourceNodeOutputId": "0",
                "targetNodeInputId": str(len(target["incomingEdges"])),
            }
            if all(e["sourceNodeId"] != source_id for e in target["incomingEdges"]):
                target["incomingEdges"].append(edge)
    for k, reads in enumerate(s.graph_outputs):
        name = s.outputs[k].name if k < len(s.outputs) else None
        nodes[f"output{k}"] = {
            "id": f"output{k}",
            "label": name or f"output {k}",
            "namespace": "",
            "attrs": [],
            "incomingEdges": [
                {
                    "sourceNodeId": ids[r] if r >= 0 else f"input{-1 - r}",
                    "sourceNodeOutputId": "0",
                    "targetNodeInputId": "0",
                }
                for r in reads
                if r < 0 or r in ids
            ],
        }
    return {"graphs": [{"id": graph_id, "nodes": list(nodes.values())}]}


def node_data(laid: Laid, graph_id: str, figure: str) -> dict[str, Any]:
    """One figure per module node, as Model Explorer's node data (``ModelNodeData``); Model Explorer sums them up
    its layers (groups) itself."""
    results: dict[str, dict[str, float]] = {}
    leaves = _leaves(laid.structure)
    for path, layer in laid.layers.items():
        if path not in leaves:
            continue
        value: float | None
        if figure == FIGURES[0]:
            value = times_tolerance(layer.vs_float64)
        elif figure == FIGURES[1]:
            value = times_tolerance(layer.vs_eager)
        elif figure == FIGURES[2]:
            value = layer.time.seconds * 1e6 if layer.time else None
        else:
            value = float(layer.node.flops) if layer.node.flops else None
        if value is not None and value == value and value != float("inf"):
            results[f"module:{path}"] = {"value": value}
    return {graph_id: {"results": results, "gradient": GRADIENT}}


def export(laid: Laid, folder: Path, name: str) -> tuple[Path, list[tuple[str, Path]]]:
    """The graph file and one node-data file per figure with data, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    graph_path = folder / f"{name}.json"
    graph_path.write_text(json.dumps(graph(laid, name)), encoding="utf-8")
    data = []
    for figure in FIGURES:
        doc = node_data(laid, name, figure)
        if doc[name]["results"]:
            slug = figure.split(" (")[0].replace(" ", "-")
            path = folder / f"{name}.{slug}.json"
            path.write_text(json.dumps(doc), encoding="utf-8")
            data.append((figure, path))
    return graph_path, data


def main(laid: Laid, job_dir: Path, export_dir: Path | None, *, open_it: bool, port: int) -> int:
    """``neffbench structure JOB --export DIR`` / ``--model-explorer``."""
    from neffbench.remote.session import ssh_target

    folder = export_dir if export_dir is not None else job_dir / "model-explorer"
    graph_path, data = export(laid, folder, job_dir.name)
    print(f"neffbench: Model Explorer graph {graph_path}", file=sys.stderr)
    for figure, path in data:
        print(f"neffbench: node data ({figure}) {path}", file=sys.stderr)
    if not open_it:
        return 0
    try:
        import model_explorer
    except ImportError:
        print(
            "structure: --model-explorer needs Google's Model Explorer: install it with "
            "pip install 'neffbench[explorer]' (the files above open in any Model Explorer too)",
            file=sys.stderr,
        )
        return 1
    remote = bool(os.environ.get("SSH_CONNECTION"))
    if remote:
        target, options = ssh_target()
        print(
            f"neffbench: Model Explorer serves on this box's port {port}. On your laptop: ssh{options} -L "
            f"{port}:localhost:{port} {target}, then open http://localhost:{port}",
            file=sys.stderr,
        )
    config = model_explorer.config()
    config.add_model_from_path(str(graph_path))
    for _, path in data:
        config.add_node_data_from_path(str(path))
    model_explorer.visualize_from_config(config=config, port=port, no_open_in_browser=remote)
    return 0
