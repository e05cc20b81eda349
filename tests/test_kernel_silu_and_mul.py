"""SiluAndMul against an independent float64 reference, traced against eager, and its rules, hash, presets
and preview (what every kernel promises is tests/test_kernel_contract.py)."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
import torch

from neffbench.kernels.silu_and_mul.kernel import KERNEL
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec
from neffbench.schema.problems import Problem
from neffbench.spec import dumps_toml, load, loads_toml, spec_hash, validate
from tests.work_count import calls_made

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# Against float64: float32 is within a few ulps. In bfloat16 and float16 vLLM rounds twice (SiLU's
# result, then the product), each at most half an ulp: 2**-8 (bf16) / 2**-11 (fp16) relative; the
# absolute part covers SiLU's own rounding near its zero crossing.
TOL = {
    "float32": dict(atol=1e-6, rtol=1e-5),
    "bfloat16": dict(atol=1e-3, rtol=2**-7),
    "float16": dict(atol=1e-4, rtol=2**-10),
}


def make_spec(**fields) -> SiluAndMulCompileSpec:
    s = SiluAndMulCompileSpec()
    act = {k: v for k, v in fields.items() if k == "intermediate_size"}
    inputs = {k: v for k, v in fields.items() if k not in act}
    return dataclasses.replace(s, act=dataclasses.replace(s.act, **act), inputs=dataclasses.replace(s.inputs, **inputs))


def reference(x: torch.Tensor) -> np.ndarray:
    """SwiGLU from its definition, in float64 numpy: gate / (1 + e^-gate) * up, gate first."""
    a = x.to(torch.float64).numpy()
    d = a.shape[-1] // 2
    gate, up = a[:, :d], a[:, d:]
    return gate / (1.0 + np.exp(-gate)) * up


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("d", [64, 37, 1])
def test_module_matches_float64_reference(dtype, d):
    spec = make_spec(intermediate_size=d, num_tokens=(5,), dtype=dtype, seed=3)
    built = KERNEL.build(spec)
    with torch.no_grad():
        out = built.module(*built.inputs)
    assert out.dtype == DTYPES[dtype] and out.shape == (5, d)
    np.testing.assert_allclose(out.double().numpy(), reference(built.inputs[0]), **TOL[dtype])


def test_gate_is_the_first_half():
    x = torch.tensor([[2.0, -30.0, 3.0, 5.0]])  # gate (2, -30), up (3, 5)
    out = KERNEL.build(make_spec(intermediate_size=2, num_tokens=(1,))).module(x)
    silu2 = 2.0 / (1.0 + np.exp(-2.0))
    np.testing.assert_allclose(out.numpy(), [[silu2 * 3.0, -30.0 / (1.0 + np.exp(30.0)) * 5.0]], rtol=1e-6)


@pytest.mark.parametrize(
    "fields,expected",
    [
        (
            dict(intermediate_size=0),
            Problem("act.intermediate_size", "Intermediate size must be at least 1; got 0.", "error"),
        ),
        (
            dict(intermediate_size=200000),
            Problem("act.intermediate_size", "Intermediate size must be at most 131072; got 200000.", "error"),
        ),
        (dict(num_tokens=()), Problem("inputs.num_tokens", "List at least one number of tokens.", "error")),
        (dict(num_tokens=(-2,)), Problem("inputs.num_tokens", "Every bucket needs at least 1 token; got -2.", "error")),
        (dict(num_tokens=(4, 4)), Problem("inputs.num_tokens", "Bucket 4 is listed twice.", "error")),
        (
            dict(num_tokens=(2_000_000,)),
            Problem("inputs.num_tokens", "A bucket can hold at most 1048576 tokens; got 2000000.", "error"),
        ),
        (
            dict(intermediate_size=131072, num_tokens=(16384,)),
            Problem(
                "inputs.num_tokens",
                "The largest bucket's example input takes 16.0 GiB, and building and tracing it "
                "needs several times that much memory.",
                "warning",
            ),
        ),
    ],
)
def test_validation_sentences(fields, expected):
    assert KERNEL.validate(make_spec(**fields)) == [expected]


def test_full_validation_reports_own_fields_once():
    assert validate(SiluAndMulCompileSpec()) == []
    found = [p for p in validate(make_spec(intermediate_size=0)) if p.field == "act.intermediate_size"]
    assert len(found) == 1


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_io_signature_matches_built_module(dtype):
    spec = make_spec(intermediate_size=24, num_tokens=(6,), dtype=dtype)
    (sig_in,), (sig_out,) = KERNEL.io_signature(spec)
    built = KERNEL.build(spec)
    assert (sig_in.name, sig_in.role) == ("input0", "x") and built.input_names == ("x",)
    assert list(inspect.signature(built.module.forward).parameters) == ["x"]
    assert (sig_in.dtype, sig_in.shape) == (str(built.inputs[0].dtype).removeprefix("torch."), (6, 48))
    with torch.no_grad():
        out = built.module(*built.inputs)
    assert (sig_out.name, sig_out.role) == ("output0", "out") and built.output_names == ("out",)
    got = (str(out.dtype).removeprefix("torch."), tuple(out.shape))
    assert (sig_out.dtype, sig_out.shape) == got == (dtype, (6, 24))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_trace_equals_eager(dtype):
    spec = make_spec(intermediate_size=80, num_tokens=(4,), dtype=dtype)
    built = KERNEL.build(spec)
    traced = torch.jit.trace(built.module, built.inputs, strict=False)
    fresh = KERNEL.example_inputs(KERNEL.with_seed(spec, 99))  # a trace that baked values in fails here
    with torch.no_grad():
        for inputs in (built.inputs, fresh):
            assert torch.equal(traced(*inputs), built.module(*inputs))


def test_reproduce_source_rebuilds_the_job():
    spec = make_spec(intermediate_size=40, num_tokens=(3,), dtype="bfloat16", seed=11)
    built = KERNEL.build(spec)
    source = KERNEL.reproduce_source(spec, built)
    assert "neffbench" not in source
    namespace: dict = {}
    exec(compile("import torch\n" + source, "reproduce.py", "exec"), namespace)
    inputs = namespace["example_inputs"]()
    assert len(inputs) == 1 and torch.equal(inputs[0], built.inputs[0])
    with torch.no_grad():
        assert torch.equal(namespace["build_module"]()(*inputs), built.module(*built.inputs))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_preview_plots_are_finite(dtype):
    spec = make_spec(intermediate_size=128, num_tokens=(16, 8), dtype=dtype)
    preview = KERNEL.preview(spec, {"num_tokens": 8})
    assert [p.title for p in preview.plots][0] == "SiLU over the gate's values"
    assert preview.to_json()["plots"]
    for plot in preview.plots:
        for s in plot.series:
            x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
            assert np.isfinite(x).all() and np.isfinite(y).all() and y.size
            assert len(x) == (len(y) + 1 if plot.kind == "histogram" else len(y))
    assert preview.verdicts["max |eager - float64|"] is True
    # The gate markers sit at the gate half's extremes.
    (x,) = KERNEL.example_inputs(KERNEL.for_bucket(spec, {"num_tokens": 8}))
    lo = preview.plots[0].series[1].x[0]
    assert lo == pytest.approx(float(x[:, :128].float().min()))


def test_preview_of_a_llama_sized_activation_is_quick_and_refuses_errors():
    # Quick: whole-tensor operations, no Python loop over rows or elements, so 128 tokens x 2*14336 make as many
    # calls as 2 x 2*64 (make bench times it).
    llama, tiny = SiluAndMulCompileSpec(), make_spec(intermediate_size=64, num_tokens=(2,))
    KERNEL.preview(llama), KERNEL.preview(tiny)  # torch's first use of each operation is not the preview's work
    # A loop over llama's 128 rows would add at least 128 calls; a few more or fewer are torch's own bookkeeping.
    assert calls_made(lambda: KERNEL.preview(llama)) < calls_made(lambda: KERNEL.preview(tiny)) + 64
    with pytest.raises(ValueError, match="act.intermediate_size"):
        KERNEL.preview(make_spec(intermediate_size=0))


def test_hash_covers_what_reaches_the_neff():
    base = SiluAndMulCompileSpec()
    assert spec_hash(base) == spec_hash(make_spec(seed=5))
    assert spec_hash(base) != spec_hash(make_spec(intermediate_size=18944))
    assert spec_hash(base) != spec_hash(make_spec(dtype="bfloat16"))


def test_presets_cover_the_models_widths():
    files = sorted(KERNEL.preset_dir.glob("*.toml"))
    assert len(files) >= 3 and {load(p).act.intermediate_size for p in files} >= {14336, 18944}
    assert all("huggingface.co/" in p.read_text() and "config.json" in p.read_text() for p in files)


def test_spec_file_round_trip_and_buckets():
    spec = make_spec(intermediate_size=18944, num_tokens=(1, 64), dtype="float16")
    assert loads_toml(dumps_toml(spec)) == spec
    assert KERNEL.buckets(spec) == [{"num_tokens": 1}, {"num_tokens": 64}]
