"""Sparse, quantized, nested, meta and opaque tensors: the weights digest, pre-flight, the probe's statistics, the
saved arrays and taps read them or say plainly that neffbench cannot, naming the tensor; none of them trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from neffbench.backends.weights import weights_digest
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import to_dict
from neffbench.usercode.tensors import UnreadableTensor, dense, describe
from neffbench.workers.probe import check
from tests.cli import neffbench
from tests.data.modules import odd_tensors
from tests.fakes import fake_env

DATA = Path(__file__).resolve().parent / "data" / "modules"
ODD = DATA / "odd_tensors.py"
# torch 2.10+ deprecates torch.quantize_per_channel; the module is about what a quantized buffer does to the tool.
QUANTIZE_DEPRECATED = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")
# torch says these layouts are beta and prototype when it makes the first one: its words, not the workbench's.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Sparse [A-Z]+ tensor support is in beta state:UserWarning"),
    pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors is in prototype stage:UserWarning"),
]


def _check(entry: str, inputs: dict[str, str], **module) -> dict:
    spec = ModuleCompileSpec(name="t", module=ModuleSection(entry=f"{ODD}:{entry}", **module), inputs=inputs)
    return check({"spec": to_dict(spec)})


def _problems(report: dict) -> list[tuple[str, str]]:
    return [(p["severity"], p["message"]) for p in report.get("problems", [])]


class Plain(nn.Module):
    """Every kind of tensor an earlier digest read; its digest must stay what those jobs recorded."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)
        with torch.no_grad():
            self.proj.weight.copy_(torch.arange(6.0).reshape(2, 3) / 7)
            self.proj.bias.copy_(torch.tensor([-1.5, 2.25]))
        self.register_buffer("ids", torch.arange(5))
        self.register_buffer("mask", torch.tensor([True, False, True]))
        self.register_buffer("bf16", (torch.arange(4.0) / 3).bfloat16())
        self.register_buffer("shape_only", torch.empty(4, device="meta"))
        self.register_buffer("transposed", torch.arange(6.0).reshape(2, 3).t())


class Holds(nn.Module):
    def __init__(self, tensor):
        super().__init__()
        self.register_buffer("held", tensor)


# ---- the weights digest --------------------------------------------------------------------------


def test_the_digest_of_plain_tensors_is_what_earlier_jobs_recorded():
    assert weights_digest(Plain()) == {
        "sha256": "d0feca1dfd06c86cc2602aaa74eb26df593810e8420f24ccb9e01c0d8d8f0851",
        "tensors": 7,
        "bytes": 123,
        "method": "every byte",
    }


@pytest.mark.parametrize(
    "make",
    [
        lambda d: d.to_sparse(),
        lambda d: d.to_sparse_csr(),
        lambda d: d.to_sparse_csc(),
        lambda d: d.to_sparse_bsr((1, 1)),
        lambda d: torch.nested.nested_tensor([d[0], d[1, :2]]),
    ],
    ids=["coo", "csr", "csc", "bsr", "nested"],
)
def test_the_digest_reads_sparse_and_nested_tensors_by_their_values(make):
    dense_values = torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])
    other = dense_values.clone()
    other[1, 0] = 4.0
    digests = [weights_digest(Holds(make(d))) for d in (dense_values, dense_values.clone(), other)]
    assert digests[0] == digests[1] and digests[0]["sha256"] != digests[2]["sha256"]
    assert digests[0]["method"] == "every byte" and "unread" not in digests[0]
    assert digests[0]["sha256"] != weights_digest(Holds(dense_values))["sha256"]  # sparse is not its dense twin


def test_a_tensor_the_digest_cannot_read_is_named_and_counted_by_its_shape_alone():
    first, second = weights_digest(odd_tensors.HoldsOpaque()), weights_digest(odd_tensors.HoldsOpaque())
    assert first["unread"] == ["buffer opaque"]
    assert first["method"].startswith(
        "every byte, except where neffbench cannot read a tensor, whose name, dtype and shape count instead: the "
        "buffer 'opaque' (a tensor of class Opaque: Opaque implements no operation (aten."
    )
    assert first["method"].endswith("); this is a limit of neffbench, not of your module")
    assert first["tensors"] == 3 and first["sha256"] != second["sha256"]  # the Linear's weights are random


def test_the_digest_pasted_into_reproduce_scripts_reads_them_too():
    from neffbench.backends.weights_source import script_source

    namespace: dict = {"torch": torch, "sys": __import__("sys"), "ANYWAY": False}
    exec(script_source(weights_digest(odd_tensors.SparseHeads())), namespace)  # noqa: S102 - the project's own text
    assert namespace["weights_digest"](odd_tensors.SparseHeads())["tensors"] == 3


# ---- reading values ----------------------------------------------------------------------------


@QUANTIZE_DEPRECATED
def test_values_of_sparse_quantized_and_subclass_tensors_read_as_plain_ones():
    d = torch.tensor([[0.0, 1.5], [2.0, 0.0]])
    assert describe(d) is None and describe(nn.Parameter(d)) is None
    assert describe(d.to_sparse()) == "a sparse_coo tensor" and torch.equal(dense(d.to_sparse()), d)
    assert describe(d.to_sparse_csr()) == "a sparse_csr tensor" and torch.equal(dense(d.to_sparse_csr()), d)
    q = torch.quantize_per_tensor(d, 0.5, 0, torch.qint8)
    assert describe(q) == "a quantized qint8 tensor" and torch.equal(dense(q), d)

    class Tagged(torch.Tensor):  # a plain subclass reads as the tensor it is
        pass

    assert describe(d.as_subclass(Tagged)) is None
    assert describe(odd_tensors.Opaque((2,))) == "a tensor of class Opaque"


def test_a_tensor_without_one_array_of_values_says_why():
    with pytest.raises(UnreadableTensor, match="^a meta tensor holds shapes only, no values$"):
        dense(torch.empty(3, device="meta"))
    with pytest.raises(UnreadableTensor, match="^a nested tensor holds tensors of different shapes, not one array$"):
        dense(torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]))
    with pytest.raises(
        UnreadableTensor, match="^a tensor of class Opaque, whose values torch cannot give as one array"
    ):
        dense(odd_tensors.Opaque((2,)))


def test_probe_statistics_saved_arrays_and_taps_read_a_sparse_tensor_as_dense():
    from neffbench.runs.arrays import from_tensor
    from neffbench.taps.compare import as_float64
    from neffbench.workers.probe import _tensor_report

    d = torch.tensor([[0.0, 1.5], [2.0, 0.0]])
    report = _tensor_report("s", d.to_sparse())
    assert report["stats"]["numel"] == 4 and report["stats"]["max"] == 2.0 and "note" not in report
    array, dtype = from_tensor(d.to_sparse())
    assert dtype == "float32" and array.tolist() == d.tolist()
    assert as_float64(d.to_sparse_csr()).tolist() == d.tolist()
    meta = _tensor_report("m", torch.empty(3, device="meta"))
    assert meta["shape"] == [3] and meta["stats"]["numel"] == 0
    assert meta["note"] == "no statistics: a meta tensor holds shapes only, no values"


def test_a_submodule_returning_a_sparse_tensor_is_not_tapped_and_the_plan_says_why():
    from neffbench.taps.select import plan

    class Sparsify(nn.Module):
        def forward(self, x):
            return x.to_sparse()

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.sparsify, self.scale = Sparsify(), nn.Linear(2, 2)

        def forward(self, x):
            return self.scale(self.sparsify(x).to_dense())

    made = plan(Outer(), (torch.ones(2, 2),))
    assert [t.module for t in made.taps] == ["scale"]
    assert "sparsify (Sparsify) returns a sparse_coo tensor, which a NEFF cannot return, so it is not tapped." in (
        made.notes
    )


# ---- pre-flight ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry, message",
    [
        (
            "ReadsSparse",
            "the traced graph reads the buffer 'mask', a sparse_csr tensor: a NEFF holds plain dense tensors only, so "
            "make it one when the module is built (to_dense(), dequantize()).",
        ),
        pytest.param(
            "QuantizedWeight",
            "the traced graph reads the buffer 'weight', a quantized qint8 tensor: a NEFF holds plain dense tensors "
            "only, so make it one when the module is built (to_dense(), dequantize()).",
            marks=QUANTIZE_DEPRECATED,
        ),
        (
            "HoldsOpaque",
            "the buffer 'opaque' is a tensor of class Opaque, which the traced graph never reads: it is left out of "
            "the NEFF.",
        ),
    ],
)
def test_pre_flight_names_each_unusual_buffer_and_whether_the_graph_reads_it(entry, message):
    report = _check(entry, {"x": "f32[2,8]"})
    assert report["ok"] is True and _problems(report) == [("warning", message)]


def test_a_sparse_input_or_output_is_an_error_naming_it():
    out = _check("ReturnsSparse", {"x": "f32[2,8]"})
    assert ("error", "output 'output' is a sparse_coo tensor: a NEFF returns plain dense tensors only; return it as "
            "one (to_dense(), dequantize()).") in _problems(out)  # fmt: skip
    assert out["outputs"][0]["stats"]["numel"] == 16  # its statistics read it as dense
    given = check(
        {
            "spec": to_dict(
                ModuleCompileSpec(
                    name="t",
                    module=ModuleSection(entry=f"{ODD}:Identity", examples=f"{ODD}:sparse_examples"),
                    buckets={"batch": (3,)},
                )
            )
        }
    )
    assert ("error", "input 'x' is a sparse_coo tensor: a NEFF takes plain dense tensors only; pass it as one "
            "(to_dense(), dequantize()).") in _problems(given)  # fmt: skip
    assert given["inputs"][0]["stats"]["numel"] == 9


@pytest.mark.slow
def test_check_flags_whispers_sparse_alignment_heads():
    done = neffbench("check", f"{ODD}:SparseHeads", "--input", "x:f32[2,8]")
    assert done.returncode == 0, done.stderr
    assert (
        "warning: pre-flight: the buffer 'decoder.alignment_heads' is a sparse_coo tensor, which the traced graph "
        "never reads: it is left out of the NEFF." in done.stderr
    )


# ---- compiles ----------------------------------------------------------------------------------


def _records(workdir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(workdir.glob("*/job.json"))]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cpu-check", "neuron"])
def test_modules_holding_unusual_buffers_compile(tmp_path, backend):
    env = fake_env("success") if backend == "neuron" else None
    for entry in ("SparseHeads", "QuantizedWeight", "HoldsOpaque"):
        done = neffbench(
            "compile", f"{ODD}:{entry}", "--input", "x:f32[2,8]", "--workdir", str(tmp_path / entry),
            "--backend", backend, "--target", "trn2", env=env,
        )  # fmt: skip
        assert done.returncode == 0, entry + done.stdout[-2000:] + done.stderr[-2000:]
        assert "Traceback" not in done.stderr, entry
    sparse, quantized, opaque = (_records(tmp_path / e)[0] for e in ("SparseHeads", "QuantizedWeight", "HoldsOpaque"))
    for rec in (sparse, quantized, opaque):
        assert rec["outcome"] == "succeeded" and rec["weights"]["sha256"]
        assert len(rec["neffs"]) == (1 if backend == "neuron" else 0)
    assert sparse["weights"]["tensors"] == 3 and "unread" not in sparse["weights"]
    assert sparse["numerics"]["dtype_cost"]["checked"] is True
    assert opaque["weights"]["unread"] == ["buffer inner.opaque"]
    reason = opaque["numerics"]["dtype_cost"]["reason"]
    assert reason.startswith(
        "neffbench cannot copy the buffer 'opaque' (a tensor of class Opaque) to run the module in float64: "
        "NotImplementedError: Opaque implements no operation (aten."
    )
    assert reason.endswith("); this is a limit of neffbench, not of your module")
