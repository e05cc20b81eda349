"""Pre-flight for the module kernel: every problem the issue names, with its exact sentence.

Runs the probe's check in this process (the same function the probe child and the worker use),
so each case costs a CPU trace, not a child's torch import.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import to_dict
from neffbench.workers.probe import check

DATA = Path(__file__).resolve().parent / "data" / "modules"
P = DATA / "problems.py"


def _check(entry: str, inputs: dict[str, str], **module) -> dict:
    spec = ModuleCompileSpec(name="t", module=ModuleSection(entry=entry, **module), inputs=inputs)
    return check({"spec": to_dict(spec)})


def _messages(report: dict, severity: str) -> list[str]:
    return [p["message"] for p in report.get("problems", []) if p["severity"] == severity]


CASES = [
    ("entry file missing", f"{DATA}/nope.py:X", {"x": "f32[4]"}, {}, f"entry file {DATA}/nope.py does not exist."),
    (
        "attribute missing",
        f"{P}:Nonzero",
        {"x": "f32[4]"},
        {},
        "'problems.py' has no attribute 'Nonzero'. Did you mean 'NonzeroModule'?",
    ),
    (
        "module missing",
        "nosuch.pkg:X",
        {"x": "f32[4]"},
        {},
        "module 'nosuch.pkg' cannot be imported: no module named 'nosuch'.",
    ),
    (
        "not callable",
        f"{DATA}/hf_models.py:HF_MODELS",
        {"x": "f32[4]"},
        {"call": "object"},
        f"entry {DATA}/hf_models.py:HF_MODELS gave dict, which is not callable: it needs a forward (an nn.Module) "
        "or to be a function.",
    ),
    (
        "parameter without input",
        f"{DATA}/functions.py:scaled_add",
        {"x": "f32[4]"},
        {},
        "parameter 'y' of scaled_add has no input and no default: add it under [inputs] (or [module.constants] "
        "for a non-tensor).",
    ),
    (
        "input naming no parameter",
        f"{DATA}/functions.py:scaled_add",
        {"x": "f32[4]", "y": "f32[4]", "z": "f32[4]"},
        {},
        "input 'z' names no parameter of scaled_add. Its parameters: x, y, alpha.",
    ),
    (
        "*args",
        f"{P}:StarArgs",
        {"a": "f32[4]"},
        {},
        "StarArgs.forward takes only *args, so inputs cannot be bound by name: give it named parameters (or wrap "
        "it in a module that has them).",
    ),
    (
        "**kwargs",
        f"{P}:StarKwargs",
        {"x": "f32[4]", "extra": "f32[4]"},
        {},
        "input 'extra' names no parameter of StarKwargs.forward and would only reach **kwargs, which a traced "
        "graph cannot bind by name; give StarKwargs.forward a parameter 'extra'.",
    ),
    (
        "tensor for a float",
        f"{P}:ThetaModule",
        {"x": "f32[4]", "theta": "f32[]"},
        {},
        "parameter 'theta' of ThetaModule.forward takes a float, not a tensor: bind `theta` as a constant "
        "([module.constants] theta = ...).",
    ),
    (
        "float without a value",
        f"{P}:ThetaModule",
        {"x": "f32[4]"},
        {},
        "parameter 'theta' of ThetaModule.forward takes a float and has no default: bind `theta` as a constant "
        "([module.constants] theta = ...).",
    ),
    (
        "ids out of range",
        f"{P}:TokenEmbedding",
        {"input_ids": "i64[1,8] randint(900, 1000)"},
        {},
        None,
    ),  # the range in the sentence depends on the values drawn: checked below
    (
        "None output",
        f"{P}:NoneOutput",
        {"x": "f32[4]"},
        {},
        "output[1] is None: a traced graph returns tensors only (pick the outputs you need with [module] outputs, "
        "or pass a constant that turns this output off).",
    ),
    (
        "cache output",
        f"{P}:CacheOutput",
        {"x": "f32[4]"},
        {},
        "past_key_values is a DynamicCache: pass use_cache=False as a constant ([module.constants] use_cache = false).",
    ),
    (
        "int output",
        f"{P}:NoTensorOutput",
        {"x": "f32[4]"},
        {},
        "output is an int (4), not a tensor: a traced graph returns tensors only.",
    ),
    (
        "no tensor output",
        f"{P}:IntConstantOutput",
        {"x": "f32[4]"},
        {},
        "output is an int (3), not a tensor: a traced graph returns tensors only.",
    ),
    (
        "user code raises",
        f"{P}:RaisesInForward",
        {"x": "f32[4]"},
        {},
        "calling RaisesInForward.forward raised ValueError at problems.py:169: boom from user code",
    ),
    (
        "complex output",
        f"{P}:ComplexOutput",
        {"x": "f32[2,3,2]"},
        {},
        "output 'output' is complex64: Neuron has no complex dtypes; return torch.view_as_real(...) instead.",
    ),
]
DATA_DEPENDENT = [
    ("NonzeroModule", {"x": "f32[16]"}, "aten::nonzero"),
    ("MaskedSelectModule", {"x": "f32[16]"}, "aten::masked_select"),
    ("UniqueModule", {"x": "i64[16] randint(0, 4)"}, "aten::_unique2"),
    ("BoolIndexModule", {"x": "f32[16]"}, "aten::index (boolean mask)"),
]


@pytest.mark.parametrize(
    "entry, inputs, module, sentence", [c[1:] for c in CASES if c[4]], ids=[c[0] for c in CASES if c[4]]
)
def test_each_error_is_one_sentence_naming_what_is_wrong(entry, inputs, module, sentence):
    report = _check(entry, inputs, **module)
    assert report["ok"] is False
    assert _messages(report, "error")[0] == sentence


def test_token_ids_beyond_the_embedding_name_the_input_and_the_table():
    report = _check(f"{P}:TokenEmbedding", {"input_ids": "i64[1,8] randint(900, 1000)"})
    (message,) = _messages(report, "error")
    assert message.startswith("input 'input_ids' has token ids from 9")
    assert message.endswith("out of range of the embedding 'embed' (100 rows): use randint(0, 100).")


@pytest.mark.parametrize("cls, inputs, op", DATA_DEPENDENT, ids=[c[0] for c in DATA_DEPENDENT])
def test_data_dependent_ops_are_named(cls, inputs, op):
    report = _check(f"{P}:{cls}", inputs)
    assert report["data_dependent"] == [op]
    assert (
        f"the traced graph uses {op}, whose output shape depends on the input values: a NEFF has fixed "
        "shapes, so this cannot be compiled (use a fixed-size mask and torch.where)." in _messages(report, "error")
    )


def test_complex_input_is_an_error():
    import torch

    from neffbench.jobs import preflight
    from neffbench.kernels.api import Built
    from neffbench.presets import load_preset

    report = preflight.Report()
    built = Built(None, (torch.zeros(2, dtype=torch.complex64),), ("z",))
    preflight.check_inputs(report, built, load_preset("seed"), makes_neff=True)
    assert report.errors == [
        "input 'z' is complex64: Neuron has no complex dtypes; pass the real and imaginary parts as two float tensors."
    ]


def test_warnings_do_not_block_and_say_what_the_neff_will_be():
    unused = _check(f"{P}:UnusedInput", {"x": "f32[4]", "y": "f32[4]"})
    assert unused["ok"] is True
    assert _messages(unused, "warning") == [
        "input 'y' is never used by the traced graph: torch_neuronx drops it from the NEFF interface, so the NEFF "
        "takes one input fewer than the module."
    ]
    assert unused["interface"] == {"inputs": ["input0 <- x"], "outputs": ["output0 <- output"]}
    constant = _check(f"{P}:ConstantOutput", {"x": "f32[4]"})
    assert _messages(constant, "warning") == [
        "output 'output[1]' depends on no input: it is a constant baked into the NEFF."
    ]
    keyword = _check(f"{P}:KeywordOnly", {"x": "f32[4]", "mask": "f32[4]"})
    assert keyword["ok"] is True
    assert _messages(keyword, "warning") == [
        "parameter 'mask' of KeywordOnly.forward is keyword-only: the traced wrapper passes it by name, and so "
        "does reproduce.py."
    ]


def test_tracer_warnings_name_the_users_file_and_line():
    report = _check(f"{P}:BranchOnValue", {"x": "f32[4]"})
    (message,) = _messages(report, "warning")
    assert message.startswith("TracerWarning at problems.py:117: Converting a tensor to a Python boolean")


def test_int64_ids_that_fit_int32_get_no_warning():
    report = _check(f"{P}:TokenEmbedding", {"input_ids": "i64[1,8] randint(0, 100)"})
    assert report["ok"] is True and _messages(report, "warning") == []


def test_a_constant_fixes_the_float_parameter_and_outputs_pick_around_a_none():
    assert _check(f"{P}:ThetaModule", {"x": "f32[4]"}, constants={"theta": 2.0})["ok"] is True
    picked = _check(f"{P}:NoneOutput", {"x": "f32[4]"}, outputs=("0",))
    assert picked["ok"] is True
    assert picked["interface"]["outputs"] == ["output0 <- output[0]"]


def test_report_has_op_counts_statistics_and_histograms():
    report = _check(f"{DATA}/mlp.py:make_mlp", {"x": "f32[8,64]"}, kwargs={"activation": "gelu"})
    assert report["ok"] is True
    assert report["op_counts"]["aten::linear"] == 2
    assert report["op_counts"]["aten::gelu"] == 1
    (out,) = report["outputs"]
    assert out["shape"] == [8, 64] and out["dtype"] == "float32"
    assert out["stats"]["nan"] == 0 and out["stats"]["numel"] == 512
    assert sum(out["histogram"]["counts"]) == 512


def test_no_tensor_output_at_all():
    from neffbench.kernels.module.outputs import leaves

    assert leaves(()).errors == ["the module returns no tensor at all: a NEFF needs at least one tensor output."]
    assert leaves({"a": (), "b": {}}).errors == [
        "the module returns no tensor at all: a NEFF needs at least one tensor output."
    ]
