"""RMSNorm against an independent float64 reference, traced against eager in every variant, and its rules,
hash, presets and preview (what every kernel promises is tests/test_kernel_contract.py)."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
import torch

from neffbench.kernels.rms_norm.build import RmsNormModule, RmsNormWeightInputModule, rms_norm_forward
from neffbench.kernels.rms_norm.kernel import KERNEL
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec
from neffbench.schema.problems import Problem
from neffbench.spec import dumps_toml, load, loads_toml, spec_hash, validate
from tests.work_count import calls_made

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# Against float64: float32 loses a few ulps in the mean over the row and in rsqrt. In bfloat16 and
# float16 the kernel rounds twice (the normalised row cast back, then the product with the weight),
# each at most half an ulp: 2**-8 (bf16) / 2**-11 (fp16) relative, so one ulp covers both.
TOL = {
    "float32": dict(atol=1e-5, rtol=1e-5),
    "bfloat16": dict(atol=1e-3, rtol=2**-7),
    "float16": dict(atol=1e-4, rtol=2**-10),
}
COMBOS = [(r, w) for r in (False, True) for w in ("buffer", "input")]
COMBO_IDS = [f"{'residual' if r else 'plain'}-{w}" for r, w in COMBOS]


def make_spec(**fields) -> RmsNormCompileSpec:
    s = RmsNormCompileSpec()
    norm = {k: v for k, v in fields.items() if k in {f.name for f in dataclasses.fields(s.norm)}}
    inputs = {k: v for k, v in fields.items() if k not in norm}
    return dataclasses.replace(
        s, norm=dataclasses.replace(s.norm, **norm), inputs=dataclasses.replace(s.inputs, **inputs)
    )


def reference(x, residual, weight, eps):
    """RMSNorm from its definition, in float64 numpy: h = x + residual; h / sqrt(mean(h^2) + eps) * w."""
    h = x.to(torch.float64).numpy()
    if residual is not None:
        h = h + residual.to(torch.float64).numpy()
    w = weight.to(torch.float64).numpy()
    return h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + eps) * w, h


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("with_residual,weight_mode", COMBOS, ids=COMBO_IDS)
@pytest.mark.parametrize("hidden", [64, 37])
def test_module_matches_float64_reference(dtype, with_residual, weight_mode, hidden):
    spec = make_spec(
        hidden_size=hidden,
        eps=1e-5,
        with_residual=with_residual,
        weight_mode=weight_mode,
        num_tokens=(5,),
        dtype=dtype,
        seed=3,
    )
    built = KERNEL.build(spec)
    with torch.no_grad():
        got = built.module(*built.inputs)
    outs = got if with_residual else (got,)
    assert all(t.dtype == DTYPES[dtype] for t in outs)
    weight = built.inputs[-1] if weight_mode == "input" else built.module.weight
    want, h = reference(built.inputs[0], built.inputs[1] if with_residual else None, weight, 1e-5)
    np.testing.assert_allclose(outs[0].double().numpy(), want, **TOL[dtype])
    if with_residual:  # the new residual is the sum, rounded once to the dtype
        np.testing.assert_allclose(
            outs[1].double().numpy(),
            h,
            rtol=2 * {"float32": 2**-24, "bfloat16": 2**-9, "float16": 2**-12}[dtype],
            atol=0,
        )


def test_casts_follow_vllm():
    """vLLM adds in float32 and normalises there, casts back, then multiplies by the weight in the dtype."""
    g = torch.Generator().manual_seed(0)
    x, r = (torch.randn(4, 48, generator=g).to(torch.bfloat16) for _ in range(2))
    w = (1 + 0.2 * torch.randn(48, generator=g)).to(torch.bfloat16)
    h = x.float() + r.float()
    normed = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16)
    out, res = rms_norm_forward(x, w, 1e-6, r)
    assert torch.equal(out, normed * w) and torch.equal(res, h.to(torch.bfloat16))
    # float16: 60000 + 60000 overflows float16, but not the float32 sum the norm is taken of.
    big = torch.full((2, 8), 60000.0, dtype=torch.float16)
    out, res = rms_norm_forward(big, torch.ones(8, dtype=torch.float16), 1e-6, big)
    assert torch.isinf(res).all() and torch.allclose(out.float(), torch.ones(2, 8))


def problems_of(**fields) -> list[Problem]:
    return KERNEL.validate(make_spec(**fields))


@pytest.mark.parametrize(
    "fields,expected",
    [
        (
            dict(eps=0.0),
            Problem("norm.eps", "Epsilon must be greater than 0, or a row of zeros divides by zero; got 0.", "error"),
        ),
        (
            dict(eps=-1e-6),
            Problem(
                "norm.eps", "Epsilon must be greater than 0, or a row of zeros divides by zero; got -1e-06.", "error"
            ),
        ),
        (
            dict(eps=0.05),
            Problem(
                "norm.eps",
                "Epsilon 0.05 is far above the 1e-5 or 1e-6 models use, and it shrinks "
                "every row whose mean square is small.",
                "warning",
            ),
        ),
        (dict(hidden_size=0), Problem("norm.hidden_size", "Hidden size must be at least 1; got 0.", "error")),
        (
            dict(hidden_size=70000),
            Problem("norm.hidden_size", "Hidden size must be at most 65536; got 70000.", "error"),
        ),
        (dict(num_tokens=()), Problem("inputs.num_tokens", "List at least one number of tokens.", "error")),
        (dict(num_tokens=(0,)), Problem("inputs.num_tokens", "Every bucket needs at least 1 token; got 0.", "error")),
        (dict(num_tokens=(8, 8)), Problem("inputs.num_tokens", "Bucket 8 is listed twice.", "error")),
        (
            dict(num_tokens=(2_000_000,)),
            Problem("inputs.num_tokens", "A bucket can hold at most 1048576 tokens; got 2000000.", "error"),
        ),
        (
            dict(weight_init="ones"),
            Problem(
                "norm.weight_init",
                "A weight of ones inlined into the NEFF lets the "
                "compiler fold the multiply away, so the NEFF may not "
                "time it; use random values or pass the weight as an "
                "input.",
                "warning",
            ),
        ),
        (
            dict(hidden_size=65536, num_tokens=(16384,), with_residual=True),
            Problem(
                "inputs.num_tokens",
                "The largest bucket's example inputs take 8.0 GiB, and building and tracing "
                "them needs several times that much memory.",
                "warning",
            ),
        ),
    ],
)
def test_validation_sentences(fields, expected):
    assert problems_of(**fields) == [expected]


def test_full_validation_reports_own_fields_once():
    assert validate(RmsNormCompileSpec()) == []
    assert problems_of(weight_init="ones", weight_mode="input") == []
    eps = [p for p in validate(make_spec(eps=-1.0)) if p.field == "norm.eps"]
    assert len(eps) == 1 and "greater than 0" in eps[0].message


@pytest.mark.parametrize("with_residual,weight_mode", COMBOS, ids=COMBO_IDS)
def test_io_signature_matches_built_module(with_residual, weight_mode):
    spec = make_spec(
        hidden_size=32, with_residual=with_residual, weight_mode=weight_mode, num_tokens=(6,), dtype="bfloat16"
    )
    ins, outs = KERNEL.io_signature(spec)
    built = KERNEL.build(spec)
    assert [t.name for t in ins] == [f"input{i}" for i in range(len(built.inputs))]
    assert tuple(t.role for t in ins) == built.input_names
    # The roles are the forward's own parameter names, in order: positional binding cannot go wrong.
    assert list(inspect.signature(built.module.forward).parameters)[: len(ins)] == list(built.input_names)
    for sig, t in zip(ins, built.inputs):
        assert (sig.dtype, sig.shape) == (str(t.dtype).removeprefix("torch."), tuple(t.shape))
    with torch.no_grad():
        got = built.module(*built.inputs)
    got = got if isinstance(got, tuple) else (got,)
    assert [t.name for t in outs] == [f"output{i}" for i in range(len(got))]
    assert tuple(t.role for t in outs) == built.output_names
    for sig, t in zip(outs, got):
        assert (sig.dtype, sig.shape) == (str(t.dtype).removeprefix("torch."), tuple(t.shape))
    expected = RmsNormWeightInputModule if (weight_mode, with_residual) == ("input", False) else RmsNormModule
    assert type(built.module) is expected


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("with_residual,weight_mode", COMBOS, ids=COMBO_IDS)
def test_trace_equals_eager(dtype, with_residual, weight_mode):
    spec = make_spec(hidden_size=96, with_residual=with_residual, weight_mode=weight_mode, num_tokens=(4,), dtype=dtype)
    built = KERNEL.build(spec)
    traced = torch.jit.trace(built.module, built.inputs, strict=False)
    fresh = KERNEL.example_inputs(KERNEL.with_seed(spec, 99))  # a trace that baked values in fails here
    with torch.no_grad():
        for inputs in (built.inputs, fresh):
            want, got = built.module(*inputs), traced(*inputs)
            for a, b in zip(got if with_residual else (got,), want if with_residual else (want,)):
                assert torch.equal(a, b)


@pytest.mark.parametrize("with_residual,weight_mode", COMBOS, ids=COMBO_IDS)
def test_reproduce_source_rebuilds_the_job(with_residual, weight_mode):
    spec = make_spec(
        hidden_size=40,
        eps=1e-5,
        with_residual=with_residual,
        weight_mode=weight_mode,
        num_tokens=(3,),
        dtype="float16",
        seed=11,
    )
    built = KERNEL.build(spec)
    source = KERNEL.reproduce_source(spec, built)
    assert "neffbench" not in source
    namespace: dict = {}
    exec(compile("import torch\n" + source, "reproduce.py", "exec"), namespace)
    inputs = namespace["example_inputs"]()
    assert len(inputs) == len(built.inputs) and all(torch.equal(a, b) for a, b in zip(inputs, built.inputs))
    with torch.no_grad():
        got, want = namespace["build_module"]()(*inputs), built.module(*built.inputs)
    for a, b in zip(got if with_residual else (got,), want if with_residual else (want,)):
        assert torch.equal(a, b)


@pytest.mark.parametrize("with_residual,weight_mode", COMBOS, ids=COMBO_IDS)
def test_preview_plots_are_finite(with_residual, weight_mode):
    spec = make_spec(
        hidden_size=256, with_residual=with_residual, weight_mode=weight_mode, num_tokens=(16, 8), dtype="bfloat16"
    )
    preview = KERNEL.preview(spec, {"num_tokens": 8})
    assert preview.plots and preview.to_json()["plots"]
    for plot in preview.plots:
        for s in plot.series:
            x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
            assert np.isfinite(x).all() and np.isfinite(y).all() and y.size
            assert len(x) == (len(y) + 1 if plot.kind == "histogram" else len(y))
    assert preview.verdicts["max |eager - float64|"] is True
    assert ("residual |err|" in preview.badges) == with_residual
    assert preview.plots[0].series[0].y.shape == (8,)


def test_preview_of_a_llama_sized_norm_is_quick_and_refuses_errors():
    # Quick: whole-tensor operations, no Python loop over rows or elements, so 128 tokens x 4096 make as many calls
    # as 2 x 64 (make bench times it).
    llama, tiny = RmsNormCompileSpec(), make_spec(hidden_size=64, num_tokens=(2,))
    KERNEL.preview(llama), KERNEL.preview(tiny)  # torch's first use of each operation is not the preview's work
    # A loop over llama's 128 rows (or 4096 columns) would add at least 128 calls; a few more or fewer are torch's
    # own bookkeeping of the first use of a size.
    assert calls_made(lambda: KERNEL.preview(llama)) < calls_made(lambda: KERNEL.preview(tiny)) + 64
    with pytest.raises(ValueError, match="norm.eps"):
        KERNEL.preview(make_spec(eps=0.0))


def test_hash_covers_what_reaches_the_neff():
    base = make_spec(weight_mode="buffer")
    assert spec_hash(base) != spec_hash(make_spec(weight_mode="buffer", weight_init="ones"))
    # As an input the weight's values are data; the seed never reaches the NEFF, and nor may it
    # reach the inlined weight.
    assert spec_hash(make_spec(weight_mode="input")) == spec_hash(make_spec(weight_mode="input", weight_init="ones"))
    assert spec_hash(base) == spec_hash(make_spec(seed=5))
    small = dict(hidden_size=16, num_tokens=(2,))
    assert torch.equal(
        KERNEL.build(make_spec(**small)).module.weight, KERNEL.build(make_spec(seed=5, **small)).module.weight
    )


def test_presets_cover_the_fused_residual():
    files = sorted(KERNEL.preset_dir.glob("*.toml"))
    assert len(files) >= 4 and any(load(p).norm.with_residual for p in files)
    assert all("huggingface.co/" in p.read_text() and "config.json" in p.read_text() for p in files)


def test_spec_file_round_trip_and_buckets():
    spec = make_spec(eps=1e-5, with_residual=True, weight_mode="input", num_tokens=(1, 64), dtype="float16")
    assert loads_toml(dumps_toml(spec)) == spec
    assert KERNEL.buckets(spec) == [{"num_tokens": 1}, {"num_tokens": 64}]
