"""Taps: choosing a module's intermediate outputs, returning them from one traced graph, and comparing each one."""

from __future__ import annotations

import contextlib
import copy
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from neffbench.kernels.module import outputs as module_outputs
from neffbench.kernels.module import wrapper as module_wrapper
from neffbench.kernels.tolerances import TOLERANCES
from neffbench.runs.arrays import from_tensor
from neffbench.taps import compare, report, select
from neffbench.taps.select import Tap, TapSelectionError
from neffbench.taps.wrapper import Tapped, TappedModuleError, flat_outputs
from tests import taps_models
from tests.taps_models import MLP, Block, Float32Only, Net, Shared


@pytest.fixture
def net():
    torch.manual_seed(0)
    return Net().eval(), (torch.randn(2, 5, 4),)


@contextlib.contextmanager
def _device_run(module, inputs, taps):
    """The tapped module, its trace, and what a runtime gives back: the traced graph's outputs split into the
    module's and the taps' (the CPU runtime runs the TorchScript). The hooks come off at the end."""
    with Tapped(module, taps) as tapped, torch.no_grad():
        traced = torch.jit.trace(tapped, tuple(inputs), check_trace=False)
        yield tapped, traced, tapped.split(traced(*inputs))


def _device_taps(module, inputs, taps):
    with _device_run(module, inputs, taps) as (_, _, (_, device)):
        return device


# ---- choosing taps ------------------------------------------------------------------------------


def test_taps_follow_execution_order_with_paths_classes_sources_dtypes_and_shapes(net):
    module, inputs = net
    plan = select.plan(module, inputs, depth=1)
    assert [t.module for t in plan.taps] == ["embed", "layers.0", "layers.1", "layers.2", "head"]
    assert [t.name for t in plan.taps] == [f"tap{i}" for i in range(5)]
    block = plan.taps[1]
    assert block.cls == "Block" and block.dtype == "float32" and block.shape == (2, 5, 8)
    file, line = block.source.rsplit(":", 1)
    assert file == taps_models.__file__ and int(line) == Block.forward.__code__.co_firstlineno
    assert plan.depth == 1


def test_children_finish_before_their_block(net):
    module, inputs = net
    paths = [t.module for t in select.plan(module, inputs, depth=2).taps]
    assert paths.index("layers.0.mlp") < paths.index("layers.0") < paths.index("layers.1.norm")
    assert "layers" not in paths  # the ModuleList is never called


def test_default_depth_is_the_deepest_that_keeps_the_count_and_says_how_to_change_it(net):
    module, inputs = net
    everything = select.plan(module, inputs)
    assert everything.depth == 3 and len(everything.taps) == 5 + 3 * 3 + 3 * 3
    assert "depth 3" in everything.notes[0] and "pattern" in everything.notes[0]
    few = select.plan(module, inputs, max_taps=6)
    assert few.depth == 1 and len(few.taps) == 5 and "depth 1 of 3" in few.notes[0]


def test_taps_by_pattern(net):
    module, inputs = net
    mlps = select.plan(module, inputs, patterns=["layers.*.mlp"])
    assert [t.module for t in mlps.taps] == ["layers.0.mlp", "layers.1.mlp", "layers.2.mlp"]
    assert mlps.depth is None
    picked = select.plan(module, inputs, patterns=["layers.1", "**.up"])
    assert [t.module for t in picked.taps] == ["layers.0.mlp.up", "layers.1.mlp.up", "layers.1", "layers.2.mlp.up"]
    # a pattern also matches a path's tail, so it survives the model being wrapped one level deeper
    wrapped = torch.nn.Sequential(module.embed, module.layers[0])
    assert [t.module for t in select.plan(wrapped, inputs, patterns=["mlp"]).taps] == ["1.mlp"]
    both = select.plan(module, inputs, patterns=["layers.*.mlp*"], depth=2)
    assert [t.module for t in both.taps] == ["layers.0.mlp", "layers.1.mlp", "layers.2.mlp"]


@pytest.mark.parametrize(
    "pattern,words",
    [("decoder.*", ["'decoder.*'", "matches no module", "embed"]), ("layers", ["never calls", "'layers.*'"])],
)
def test_a_pattern_that_matches_nothing_is_named(net, pattern, words):
    module, inputs = net
    with pytest.raises(TapSelectionError) as caught:
        select.plan(module, inputs, patterns=["layers.0", pattern])
    assert all(w in str(caught.value) for w in words), str(caught.value)


def test_a_pattern_deeper_than_the_depth_is_an_error(net):
    module, inputs = net
    with pytest.raises(TapSelectionError, match="deeper than depth 1"):
        select.plan(module, inputs, patterns=["**.up"], depth=1)


def test_a_module_called_twice_is_tapped_at_its_first_call_and_a_tensorless_one_is_skipped():
    module, x = Shared().eval(), torch.randn(2, 3)
    plan = select.plan(module, (x,))
    assert [t.module for t in plan.taps] == ["lin"] and plan.taps[0].calls == 2
    assert any("count (Counter) returns no tensor" in n for n in plan.notes)
    assert any("called 2 times" in n for n in plan.notes)
    with Tapped(module, plan.taps) as tapped, torch.no_grad():
        _, taps = tapped.split(tapped(x))
        assert torch.equal(taps["tap0"], module.lin(x))


def test_a_module_without_submodules_is_tapped_at_its_own_outputs():
    module, inputs = torch.nn.Linear(2, 2), (torch.randn(1, 2),)
    plan = select.plan(module, inputs)
    assert [(t.module, t.depth, t.part, t.shape) for t in plan.taps] == [("(output 0)", 0, "output[0]", (1, 2))]
    assert plan.depth is None and "its own outputs are the taps" in plan.notes[-1]
    with Tapped(module, plan.taps) as tapped:
        traced = torch.jit.trace(tapped, inputs, check_trace=False)
        own, taps = tapped.split(traced(*inputs))
    assert torch.equal(own[0], module(*inputs)) and torch.equal(taps["tap0"], own[0])


# ---- the tapped wrapper -------------------------------------------------------------------------


def test_tapped_returns_the_flat_outputs_then_the_taps_and_traces_to_the_same_values(net):
    module, inputs = net
    plan = select.plan(module, inputs, depth=2)
    with _device_run(module, inputs, plan.taps) as (tapped, traced, (outs, taps)):
        raw = module(*inputs)
        eager_outs, eager_taps = tapped.split(tapped(*inputs))
        paths = module_outputs.leaves(raw).paths
        assert [module_outputs.name_of(p) for p in paths] == ["logits", "hidden[0]"]
        assert all(torch.equal(a, b) for a, b in zip(outs, (raw["logits"], raw["hidden"][0])))
        assert all(torch.equal(taps[t.name], eager_taps[t.name]) for t in plan.taps)
        assert torch.equal(taps[plan.taps[0].name], module.embed(*inputs))
        other = (torch.randn(2, 5, 4),)  # the taps are graph outputs, not constants of the trace
        assert all(torch.equal(a, b) for a, b in zip(traced(*other), tapped(*other)))
    assert len(eager_outs) == 2


def test_tapped_wraps_the_module_and_remove_leaves_it_as_it_was(net):
    module, inputs = net
    with Tapped(module, select.plan(module, inputs, depth=1).taps) as tapped, torch.no_grad():
        assert tapped.module is module
        assert next(tapped.parameters()).data_ptr() == next(module.parameters()).data_ptr()
        tapped(*inputs)
        assert not tapped._caught  # no tensor of a call is held past it
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in module.modules())


def test_a_deep_copy_of_tapped_catches_its_own_taps(net):
    module, inputs = net
    taps = select.plan(module, inputs, depth=1).taps
    with Tapped(module, taps) as tapped, torch.no_grad():
        twin = copy.deepcopy(tapped).double()
        _, got = twin.split(twin(*(t.double() for t in inputs)))
    assert all(v.dtype == torch.float64 for v in got.values()) and set(got) == {t.name for t in taps}


def test_tapped_compiles_in_one_graph(net):
    """torch.compile is how TorchNeuron compiles: the taps must not break the graph."""
    module, inputs = net
    with Tapped(module, select.plan(module, inputs, depth=1).taps) as tapped, torch.no_grad():
        compiled = torch.compile(tapped, backend="eager", fullgraph=True)
        assert all(torch.equal(a, b) for a, b in zip(compiled(*inputs), tapped(*inputs)))


def test_tapped_refuses_a_tap_the_module_does_not_have(net):
    module, _ = net
    with pytest.raises(TappedModuleError, match="nowhere"):
        Tapped(module, [Tap("tap0", "nowhere", "X", None, "float32", ())])


def test_flat_outputs_refuse_none():
    with pytest.raises(TappedModuleError, match="is None"):
        flat_outputs((torch.zeros(1), None))


@pytest.fixture(scope="module")
def bert():
    """Built once: importing transformers' BERT is most of these tests' time."""
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval(), (torch.randint(0, 100, (1, 8)),)


# transformers 5 warns when torch.jit.trace probes a module's attributes, and its attention turns a shape into a
# Python bool while tracing (fixed shapes here): theirs, not a problem of the taps.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
def test_a_hugging_face_models_taps_are_its_named_modules_and_trace(bert):
    model, inputs = bert
    plan = select.plan(model, inputs, depth=2)
    names = dict(model.named_modules())
    assert plan.taps and all(t.module in names for t in plan.taps)
    assert {"encoder.layer.0", "encoder.layer.1", "embeddings.LayerNorm"} <= {t.module for t in plan.taps}
    layer = next(t for t in plan.taps if t.module == "encoder.layer.1")
    assert layer.source.split(":")[0].endswith("modeling_bert.py")  # its own forward, not a decorator's file
    with _device_run(model, inputs, plan.taps) as (tapped, _, (outs, taps)):
        eager_outs, eager_taps = tapped.split(tapped(*inputs))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(outs, eager_outs))
    result = compare.compare(plan.taps, taps, eager_taps, compare.float64_reference(model, inputs, plan.taps))
    assert result.first_divergent("vs_eager") is None and result.first_divergent("vs_float64") is None


def test_inside_the_module_kernels_wrapper_the_paths_are_the_users(bert):
    model, inputs = bert
    paths = [("last_hidden_state",), ("pooler_output",)]
    src = module_wrapper.source(["input_ids"], set(), {}, paths, "BertModel")
    wrapped = module_wrapper.make(src, model).eval()
    plan = select.plan(wrapped, inputs, patterns=["encoder.layer.*"])
    assert [t.module for t in plan.taps] == ["encoder.layer.0", "encoder.layer.1"]
    with Tapped(wrapped, plan.taps) as tapped, torch.no_grad():
        outs, taps = tapped.split(tapped(*inputs))
        assert all(torch.equal(a, b) for a, b in zip(outs, wrapped(*inputs)))
        assert torch.equal(taps["tap1"], outs[0])


def test_a_library_module_is_placed_at_the_users_line_that_called_it(net):
    """An nn.Linear's own forward is torch's linear.py: the line a user knows is theirs that called it."""
    module, inputs = net
    plan = select.plan(module, inputs, depth=3)
    by_path = {t.module: t for t in plan.taps}
    head, norm, block = by_path["head"], by_path["layers.0.norm"], by_path["layers.0"]
    lines = Path(taps_models.__file__).read_text(encoding="utf-8").splitlines()
    file, line = head.called_at.rsplit(":", 1)
    assert file == taps_models.__file__ and "self.head(h)" in lines[int(line) - 1]
    assert "self.norm(x)" in lines[int(norm.called_at.rsplit(":", 1)[1]) - 1]
    assert head.where == head.called_at and not head.source.startswith(taps_models.__file__)
    # The user's own classes are shown at their forward, as before; and the record keeps both.
    assert block.called_at is None and block.where == block.source
    assert Tap.from_dict(head.to_dict()) == head and Tap.from_dict({**head.to_dict(), "called_at": None}).where
    result = compare.compare(
        plan.taps, _device_taps(module, inputs, plan.taps), _device_taps(module, inputs, plan.taps)
    )
    row = next(line for line in report.lines(result) if line.startswith(head.name + " "))
    assert f"taps_models.py:{line}" in row and "linear.py" not in row


# ---- comparing ----------------------------------------------------------------------------------


def test_the_lossy_layer_is_first_divergent_against_float64_while_the_device_matches_eager(net):
    module, inputs = net
    plan = select.plan(module, inputs, depth=2)
    device = _device_taps(module, inputs, plan.taps)
    eager = compare.tapped_outputs(module, inputs, plan.taps)
    float64 = compare.float64_reference(module, inputs, plan.taps)
    result = compare.compare(plan.taps, device, eager, float64)
    assert result.first_divergent("vs_eager") is None
    first = result.first_divergent("vs_float64")
    assert first is not None and first.module == "layers.1.cast"
    rows = result.results["vs_float64"]
    index = rows.index(first)
    assert all(r.ok for r in rows[:index]) and first.times_tolerance > 1
    assert first.growth is not None and first.growth > 10  # where the error jumps, not only where it crosses
    line = report.first_divergent_line(result, "vs_float64")
    assert line.startswith("first divergent against float64: `layers.1.cast` (taps_models.py:")
    assert "the float32 tolerance; every tap before it is within." in line
    assert report.first_divergent_line(result, "vs_eager") == (
        f"against eager: every tap ({len(plan.taps)}) is within its dtype's tolerance."
    )


def test_a_perturbed_tap_is_first_divergent_against_eager(net):
    module, inputs = net
    plan = select.plan(module, inputs, depth=1)
    device = _device_taps(module, inputs, plan.taps)
    eager = compare.tapped_outputs(module, inputs, plan.taps)
    device = {k: v.clone() for k, v in device.items()}
    device["tap2"][0, 0, 0] += 0.01
    loose = compare.compare(plan.taps, device, eager, eager_tolerance=TOLERANCES["bfloat16"])  # --auto-cast
    assert loose.first_divergent("vs_eager") is None
    result = compare.compare(plan.taps, device, eager)
    first = result.first_divergent("vs_eager")
    assert first.name == "tap2" and first.module == "layers.1"
    assert result.skipped["vs_float64"]
    doc = report.document(result, job="jobs/abc", tapped_job="jobs/def", runtime="cpu")
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text)["first_divergent"] == {"vs_eager": "tap2", "vs_float64": None}
    assert set(doc) >= {"job", "taps", "first_divergent", "tapped_job", "runtime"}
    entry = doc["taps"][2]
    assert {"name", "module", "source", "dtype", "shape", "vs_eager", "vs_float64"} <= set(entry)
    assert {"max_abs", "max_rel", "cosine", "ok"} <= set(entry["vs_eager"]) and entry["vs_float64"] is None
    assert entry["vs_eager"]["ok"] is False and doc["taps"][1]["vs_eager"]["ok"] is True
    lines = report.lines(result)
    assert any(line.startswith("first divergent against eager: `layers.1`") for line in lines)
    assert lines[-1] == report.CAVEAT and "fuse" in report.CAVEAT


def test_the_report_says_when_the_taps_changed_the_result():
    out = torch.randn(4, 4)
    assert report.taps_changed_result(out, out.clone(), "float32") is None
    assert report.taps_changed_result((out,), [out + 1e-7], "float32") is None
    sentence = report.taps_changed_result((out,), (out + 0.1,), "float32")
    assert sentence.startswith("the taps changed the result") and "output0" in sentence
    assert "returns 2 outputs" in report.taps_changed_result(out, (out, out), "float32")


def test_a_bfloat16_module_against_float64_uses_the_bfloat16_tolerance():
    torch.manual_seed(0)
    module = MLP().to(torch.bfloat16).eval()
    inputs = (torch.randn(3, 8, dtype=torch.bfloat16),)
    plan = select.plan(module, inputs)
    assert {t.dtype for t in plan.taps} == {"bfloat16"}
    eager = compare.tapped_outputs(module, inputs, plan.taps)
    float64 = compare.float64_reference(module, inputs, plan.taps)
    assert all(v.dtype == torch.float64 for v in float64.values())
    rows = compare.compare(plan.taps, eager, eager, float64).results["vs_float64"]
    assert all((r.atol, r.rtol) == TOLERANCES["bfloat16"] for r in rows)
    assert all(r.ok for r in rows) and any(r.max_abs > 0 for r in rows)
    # the bits a bfloat16 array is saved as (inputs.npz) read as the values they hold
    bits = {k: from_tensor(v)[0] for k, v in eager.items()}
    assert compare.compare(plan.taps, bits, eager).first_divergent("vs_eager") is None


def test_float64_reference_keeps_integer_inputs_and_says_why_a_module_refuses():
    module, ids = Float32Only().eval(), torch.tensor([[1, 2, 3]])
    plan = select.plan(module, (ids,))
    reason = compare.float64_reference(module, (ids,), plan.taps)
    assert reason == "the module does not run in float64: TypeError: this module runs in float32 only"
    assert module.emb.weight.dtype == torch.float32  # a copy was cast, not the module
    emb_only = compare.float64_reference(module.emb, (ids,), [])
    assert emb_only == {}
    result = compare.compare(plan.taps, compare.tapped_outputs(module, (ids,), plan.taps), {}, reason)
    assert result.skipped["vs_float64"] == reason
    assert "not compared (the module does not run in float64" in report.first_divergent_line(result, "vs_float64")
    assert result.results["vs_eager"][0].problem == "no reference output"


_TAP = Tap("tap0", "m", "M", None, "float32", ())
_finite = arrays(np.float32, st.integers(1, 30), elements=st.floats(-1e3, 1e3, width=32))


@settings(max_examples=60, deadline=None)
@given(_finite, st.floats(0, 1e-3), st.integers(0, 29))
def test_the_verdict_is_allclose_and_times_tolerance_says_by_how_much(ref, bump, where):
    got = ref.astype(np.float64)
    got[where % ref.size] += bump
    atol, rtol = TOLERANCES["float32"]
    result = compare.measure(_TAP, got, ref)
    assert result.ok == np.allclose(got, ref.astype(np.float64), atol=atol, rtol=rtol)
    assert result.ok == (result.times_tolerance <= 1.0)
    assert result.max_abs == pytest.approx(float(np.abs(got - ref).max()), abs=1e-12)
    assert result.cosine is None or -1.0 <= result.cosine <= 1.0
    assert result.nan == 0 and result.inf == 0


@settings(max_examples=40, deadline=None)
@given(_finite, st.floats(0.1, 10))
def test_identical_outputs_are_exact_at_any_scale(ref, scale):
    result = compare.measure(_TAP, ref * scale, ref * scale)
    assert result.ok and result.max_abs == 0.0 and result.times_tolerance == 0.0 and result.scale_share == 0.0
    assert result.cosine == 1.0


def test_nan_and_inf_are_counted_and_fail_unless_the_reference_has_them_too():
    ref = np.array([1.0, np.nan, np.inf, 2.0])
    same = compare.measure(_TAP, ref.copy(), ref)
    assert same.ok and (same.nan, same.inf) == (1, 1)
    worse = compare.measure(_TAP, np.array([1.0, np.nan, np.inf, np.nan]), ref)
    assert not worse.ok and worse.nan == 2 and worse.times_tolerance == float("inf")
    assert compare.measure(_TAP, np.zeros(3), np.zeros(4)).problem == "shape [3] instead of [4]"
    ints = Tap("tap0", "m", "M", None, "int64", ())
    assert not compare.measure(ints, np.array([1, 2]), np.array([1, 3])).ok


def test_without_device_output_no_tap_fails_and_the_cpu_run_is_set_against_float64(net):
    """A NEFF job on a host without a NeuronCore: nothing to set against eager, so no tap is a failure and none is
    first divergent there; what can be compared (the eager CPU run against float64) is, and is called so."""
    module, inputs = net
    plan = select.plan(module, inputs, depth=1)
    eager = compare.tapped_outputs(module, inputs, plan.taps)
    float64 = compare.float64_reference(module, inputs, plan.taps)
    why = "no device output on this host (the NEFF runs on a NeuronCore only)"
    result = compare.compare(plan.taps, {}, eager, float64, no_device=why)
    assert result.first_divergent("vs_eager") is None and "vs_eager" not in result.results
    assert result.measured == "eager" and result.skipped["vs_eager"] == why
    assert result.first_divergent("vs_float64").module == "layers.1"  # the eager run's own cast, against float64
    assert report.verdict(result) == report.NOT_COMPARED
    lines = report.lines(result)
    assert lines[0].split() == ["tap", "module", "source", "dtype", "shape", "against", "eager", "CPU", "run",
                                "against", "float64"]  # fmt: skip
    assert not any(" FAIL" in line.split("  ")[-2] for line in lines[1:6])  # the eager column: "not compared"
    said = [line for line in lines if not line.startswith("tap")]
    assert said[1] == f"cannot compare against eager: {why}"
    assert said[2].startswith("first divergent of the CPU run against float64: `layers.1`")
    doc = json.loads(json.dumps(report.document(result, job="j", tapped_job="t", runtime="cpu")))
    assert doc["verdict"] == "could not compare" and doc["measured"] == "eager"
    assert doc["first_divergent"]["vs_eager"] is None and doc["summary"][0].startswith("cannot compare against eager")
    assert all(t["vs_eager"] is None for t in doc["taps"])


def test_a_tap_without_device_output_is_not_compared_rather_than_failed(net):
    module, inputs = net
    plan = select.plan(module, inputs, depth=1)
    eager = compare.tapped_outputs(module, inputs, plan.taps)
    device = {k: v for k, v in _device_taps(module, inputs, plan.taps).items() if k != "tap1"}
    result = compare.compare(plan.taps, device, eager)
    missing = result.results["vs_eager"][1]
    assert missing.ok is None and missing.problem == "no device output"
    assert result.first_divergent("vs_eager") is None and report.verdict(result) == report.NOT_COMPARED
    assert "every tap compared (4 of 5) is within" in report.first_divergent_line(result, "vs_eager")
    assert all(r.ok for r in result.results["vs_eager"] if r is not missing)
