"""The structure's plain-Python parts on documents made here: framework names to module paths, data flows, their
layout, the chips' peaks, and a structure document that is not one."""

from __future__ import annotations

import json

import pytest

from neffbench.structure import document, flow, layout, peaks, profile_map
from neffbench.structure.document import StructureError


def _node(path: str, cls: str, calls: int = 1, **extra) -> dict:
    return {"path": path, "class": cls, "calls": calls, **extra}


# A Llama-shaped tree: the model, its ModuleList of decoder layers (never called itself), each with attention and an
# MLP, then the head. Operations: an input, each layer's attention and MLP, the residual adds in each layer.
LLAMA = {
    "schema_version": 1,
    "nodes": [
        _node("", "LlamaForCausalLM"),
        _node("model", "LlamaModel"),
        _node("model.embed_tokens", "Embedding"),
        _node("model.layers", "ModuleList", calls=0),
        _node("model.layers.0", "NeuronLlamaDecoderLayer"),
        _node("model.layers.0.self_attn", "LlamaAttention"),
        _node("model.layers.0.mlp", "LlamaMLP"),
        _node("model.layers.1", "NeuronLlamaDecoderLayer"),
        _node("model.layers.1.self_attn", "LlamaAttention"),
        _node("model.layers.1.mlp", "LlamaMLP"),
        _node("model.norm", "LlamaRMSNorm"),
        _node("lm_head", "Linear"),
    ],
    "inputs": [{"name": "input_ids", "dtype": "int64", "shape": [1, 8]}],
    "outputs": [{"name": "logits", "dtype": "float32", "shape": [1, 8, 32]}],
    "graph": {"traced": True},
    "ops": [
        {"op": "aten::embedding", "path": "model.embed_tokens", "in": [-1]},
        {"op": "aten::matmul", "path": "model.layers.0.self_attn", "in": [0]},
        {"op": "aten::add", "path": "model.layers.0", "in": [0, 1]},
        {"op": "aten::linear", "path": "model.layers.0.mlp", "in": [2]},
        {"op": "aten::add", "path": "model.layers.0", "in": [2, 3]},
        {"op": "aten::matmul", "path": "model.layers.1.self_attn", "in": [4]},
        {"op": "aten::add", "path": "model.layers.1", "in": [4, 5]},
        {"op": "aten::linear", "path": "model.layers.1.mlp", "in": [6]},
        {"op": "aten::add", "path": "model.layers.1", "in": [6, 7]},
        {"op": "aten::mul", "path": "model.norm", "in": [8]},
        {"op": "aten::linear", "path": "lm_head", "in": [9]},
    ],
    "graph_outputs": [[10]],
}


@pytest.fixture
def llama() -> document.Structure:
    return document.of(LLAMA)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        # The docs' example: the name starts at the decoder layer (the model holding it left out), the second of its
        # class, then a part that is no module ("function[2]"): the layer itself.
        ("NeuronLlamaDecoderLayer[1]/function[2]/aten.add", "model.layers.1"),
        # Attributes, from the root's class down (the user's module under the workbench's wrapper).
        (
            "LlamaForCausalLM[inner]/LlamaModel[model]/NeuronLlamaDecoderLayer[0]/LlamaMLP[mlp]/aten.linear",
            "model.layers.0.mlp",
        ),
        ("LlamaModel[model]/LlamaRMSNorm[norm]/aten.mul", "model.norm"),
        ("Linear[lm_head]/aten.linear", "lm_head"),
        # Nothing to map: the root keeps its time.
        ("aten.add", ""),
        ("function[0]/aten.add", ""),
    ],
)
def test_framework_names_map_to_module_paths(llama, name, path):
    assert profile_map.Mapper(llama).path_of(name) == path


def test_a_layers_time_is_the_merged_time_under_it(llama):
    rows = [
        {"name": "NeuronLlamaDecoderLayer[0]/LlamaAttention[self_attn]/aten.matmul", "intervals": [[0, 10], [5, 20]],
         "tensor_engine_instruction_count": 3, "hbm_read_bytes": 100},
        {"name": "NeuronLlamaDecoderLayer[0]/aten.add", "intervals": [[15, 30]], "vector_engine_instruction_count": 1},
        {"name": "NeuronLlamaDecoderLayer[1]/aten.add", "intervals": [[40, 45]]},
        {"name": "something[else]/aten.copy", "intervals": [[50, 52]]},
    ]  # fmt: skip
    figures, unmapped = profile_map.lay(llama, rows)
    # Overlapping instructions count once: [0, 30] for the first layer, its attention [0, 20].
    assert figures["model.layers.0"].busy_ns == 30 and figures["model.layers.0.self_attn"].busy_ns == 20
    assert figures["model.layers.0"].instructions == {"tensor": 3, "vector": 1}
    assert figures["model.layers.0"].hbm_bytes == 100 and figures["model.layers.0"].operations == 2
    assert figures["model.layers.1"].busy_ns == 5 and figures["model"].busy_ns == 35
    assert figures["model.layers"].busy_ns == 35  # the container holds what its layers did
    assert figures[""].busy_ns == 37 and unmapped == ["something[else]/aten.copy"]


def test_the_data_flow_between_a_modules_children(llama):
    root = flow.flow(llama, "")
    assert [v.id for v in root.vertices if v.kind == "module"] == ["module:model", "module:lm_head"]
    assert set(root.edges) == {
        ("input0", "module:model"),
        ("module:model", "module:lm_head"),
        ("module:lm_head", "output0"),
    }
    layer = flow.flow(llama, "model.layers.0")
    assert set(layer.edges) == {
        ("in", "module:model.layers.0.self_attn"),
        ("in", "op2"),
        ("module:model.layers.0.self_attn", "op2"),
        ("op2", "module:model.layers.0.mlp"),
        ("op2", "op4"),
        ("module:model.layers.0.mlp", "op4"),
        ("op4", "out"),
    }
    drawn = layout.layout(layer)
    assert set(drawn.boxes) == {v.id for v in layer.vertices}
    ranks = {k: b.y for k, b in drawn.boxes.items()}
    assert ranks["in"] < ranks["module:model.layers.0.self_attn"] < ranks["op2"] < ranks["op4"] < ranks["out"]
    assert all(len(points) >= 2 for _, _, points in drawn.edges)
    big = flow.flow(llama, "model", limit=3)
    assert not big.vertices and "too many to draw" in (big.note or "")


def test_the_root_draws_its_called_children_a_container_in_its_layers_place(llama):
    model = flow.flow(llama, "model")
    assert [v.label for v in model.vertices if v.kind == "module"] == ["embed_tokens", "layers.0", "layers.1", "norm"]
    assert ("module:model.layers.0", "module:model.layers.1") in model.edges and (
        "in",
        "module:model.embed_tokens",
    ) in model.edges


def test_peaks_are_the_documented_chip_figures_per_logical_core():
    assert peaks.peak("trn2", 2, "bfloat16").flops_per_s == pytest.approx(667e12 / 4)
    assert peaks.peak("trn2", 1, "float32").flops_per_s == pytest.approx(181e12 / 8)
    assert peaks.peak("trn1", 2, "bfloat16").flops_per_s == pytest.approx(95e12)  # no LNC before Trainium2
    assert peaks.peak("inf2", None, "float16").flops_per_s == pytest.approx(95e12)
    assert peaks.peak("trn3", 2, "bfloat16").flops_per_s == pytest.approx(671e12 / 4)
    assert peaks.peak("gpu", 1, "float32") is None


def test_a_structure_document_that_is_not_one_is_refused_in_a_sentence(tmp_path):
    (tmp_path / "structure.json").write_text("{}")
    with pytest.raises(StructureError, match="has no root module"):
        document.load(tmp_path)
    (tmp_path / "structure.json").write_text(json.dumps({**LLAMA, "schema_version": 99}))
    with pytest.raises(StructureError, match="newer than this neffbench reads"):
        document.load(tmp_path)
    (tmp_path / "structure.json").write_text("{not json")
    with pytest.raises(StructureError, match="cannot read"):
        document.load(tmp_path)
    assert document.load(tmp_path / "none") is None


def test_depth_counts_called_modules_and_keeps_containers_above_what_is_shown(llama):
    assert [n.path for n in llama.shown(1)] == ["", "model", "lm_head"]
    assert [n.path for n in llama.shown(2)] == [
        "", "model", "model.embed_tokens", "model.layers", "model.layers.0", "model.layers.1", "model.norm", "lm_head",
    ]  # fmt: skip


def deep_document(layers: int, odd: int | None = None) -> dict:
    """The Llama-shaped tree with ``layers`` decoder layers in a chain; layer ``odd`` of another class."""
    nodes = [_node("", "LlamaForCausalLM"), _node("model", "LlamaModel"), _node("model.embed_tokens", "Embedding")]
    nodes.append(_node("model.layers", "ModuleList", calls=0))
    ops = [{"op": "aten::embedding", "path": "model.embed_tokens", "in": [-1]}]
    for k in range(layers):
        cls = "OtherDecoderLayer" if k == odd else "NeuronLlamaDecoderLayer"
        nodes += [_node(f"model.layers.{k}", cls), _node(f"model.layers.{k}.mlp", "LlamaMLP")]
        ops.append({"op": "aten::linear", "path": f"model.layers.{k}.mlp", "in": [len(ops) - 1]})
        ops.append({"op": "aten::add", "path": f"model.layers.{k}", "in": [len(ops) - 2, len(ops) - 1]})
    nodes.append(_node("model.norm", "LlamaRMSNorm"))
    ops.append({"op": "aten::mul", "path": "model.norm", "in": [len(ops) - 1]})
    return {**LLAMA, "nodes": nodes, "ops": ops, "graph_outputs": [[len(ops) - 1]]}


def _deep(layers: int, odd: int | None = None) -> document.Structure:
    return document.of(deep_document(layers, odd))


def test_a_run_of_alike_layers_is_drawn_as_one_vertex_that_expands():
    deep = _deep(32)
    model = flow.flow(deep, "model")
    modules = [v for v in model.vertices if v.kind == "module"]
    assert [(v.label, v.detail) for v in modules] == [
        ("embed_tokens", "Embedding"),
        ("layers.0 … layers.31", "32 × NeuronLlamaDecoderLayer"),
        ("norm", "LlamaRMSNorm"),
    ]
    run = modules[1]
    assert run.run and run.members == tuple(f"model.layers.{k}" for k in range(32)) and run.path == "model.layers.0"
    assert set(model.edges) == {
        ("in", "module:model.embed_tokens"),
        ("module:model.embed_tokens", "module:model.layers.0"),
        ("module:model.layers.0", "module:model.norm"),
        ("module:model.norm", "out"),
    }
    whole = flow.flow(deep, "model", expanded=frozenset({"model.layers.0"}))
    assert len([v for v in whole.vertices if v.kind == "module"]) == 34
    assert ("module:model.layers.30", "module:model.layers.31") in whole.edges


def test_a_layer_unlike_its_neighbours_breaks_the_run_and_two_alike_stay_apart():
    model = flow.flow(_deep(8, odd=5), "model")
    labels = [v.label for v in model.vertices if v.kind == "module"]
    assert labels == ["embed_tokens", "layers.0 … layers.4", "layers.5", "layers.6", "layers.7", "norm"]


def test_the_trees_rows_are_worded_once_and_a_search_finds_a_deep_module_with_the_modules_above_it(tmp_path):
    from neffbench.structure import layers, tree_rows

    laid = layers.lay(tmp_path, _deep(32))
    assert laid is not None
    shown = tree_rows.rows(laid)
    headings = [c.heading for c in shown.columns]
    row = shown.rows["model.layers.31.mlp"]
    assert row.texts[headings.index("module")] == "mlp" and row.texts[headings.index("class")] == "LlamaMLP"
    assert row.tip.startswith("model.layers.31.mlp (LlamaMLP)") and not row.marked
    assert shown.children["model.layers"][-1] == "model.layers.31"
    assert shown.matching("LAYERS.31.M") == {"", "model", "model.layers", "model.layers.31", "model.layers.31.mlp"}
    assert shown.matching("rmsnorm") == {"", "model", "model.norm"} and shown.matching("") is None


def test_a_modules_call_site_in_words_says_whose_line_it_is_or_why_none_is_known():
    from neffbench.structure import cells
    from neffbench.structure.document import Node

    library = Node(
        "model.layers.0.mlp",
        "LlamaMLP",
        calls=1,
        called_at="/lib/x/modeling_llama.py:299",
        called_in="LlamaDecoderLayer",
    )
    assert cells.call_site(library, short=True) == (
        "called at modeling_llama.py:299 (in LlamaDecoderLayer's forward: library code, not yours)"
    )
    assert cells.call_site(Node("head", "Linear", calls=1, called_at="/me/net.py:15")) == "called at /me/net.py:15"
    assert "not known" in cells.call_site(Node("head", "Linear", calls=1)) and "?" not in cells.call_site(
        Node("x", "Y", calls=1)
    )
    assert cells.call_site(Node("", "Net", calls=1)).startswith("called by the workbench's wrapper")
