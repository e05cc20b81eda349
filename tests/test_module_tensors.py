"""Tensor specs for the module kernel: parsing, every error sentence, building, and round-trip properties."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neffbench.kernels.module import tensors
from neffbench.kernels.module.tensors import (
    DTYPE_ALIASES,
    FLOAT_DTYPES,
    INT_DTYPES,
    Init,
    TensorSpec,
    TensorSpecError,
    build,
    describe,
    parse,
)

CANONICAL = ["float32", "bfloat16", "float16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]
ALIASES = {
    "f32": "float32",
    "bf16": "bfloat16",
    "f16": "float16",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
}
INT_RANGES = {
    "int64": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int8": (-128, 127),
    "uint8": (0, 255),
    "bool": (0, 1),
}
AXES = ["batch", "seq", "heads"]
DEFAULT_INITS = {
    d: Init("randn") if d in FLOAT_DTYPES else Init("ones") if d == "bool" else Init("zeros") for d in CANONICAL
}


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _error(text: str) -> str:
    with pytest.raises(TensorSpecError) as caught:
        parse(text)
    return str(caught.value)


# --- dtypes and defaults ---------------------------------------------------------------------------


@pytest.mark.parametrize("alias, canonical", [*ALIASES.items(), *((c, c) for c in CANONICAL)])
def test_every_dtype_alias_parses_to_its_canonical_name(alias, canonical):
    assert DTYPE_ALIASES[alias] == canonical
    assert parse(f"{alias}[2]").dtype == canonical


def test_alias_table_and_dtype_sets():
    assert set(DTYPE_ALIASES) == set(ALIASES) | set(CANONICAL)
    assert FLOAT_DTYPES == {"float32", "bfloat16", "float16", "float64"}
    assert INT_DTYPES == {"int64", "int32", "int16", "int8", "uint8"}
    assert isinstance(FLOAT_DTYPES, frozenset) and isinstance(INT_DTYPES, frozenset)
    assert issubclass(TensorSpecError, ValueError)


@pytest.mark.parametrize(
    "dtype, kind",
    [*((d, "randn") for d in sorted(FLOAT_DTYPES)), *((d, "zeros") for d in sorted(INT_DTYPES)), ("bool", "ones")],
)
def test_default_init_per_dtype(dtype, kind):
    spec = parse(f"{dtype}[3]")
    assert spec.init == Init(kind) and not spec.explicit_init
    assert spec.format() == f"{dtype}[3]"
    assert build(spec, {}, _gen()).dtype == getattr(torch, dtype)


# --- parsing -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, init",
    [
        ("f32[2] randn", Init("randn")),
        ("f32[2] rand(-1, 2.5)", Init("rand", (-1.0, 2.5))),
        ("i64[2] randint(0, 1000)", Init("randint", (0, 1000))),
        ("bool[2] randint(0, 2)", Init("randint", (0, 2))),
        ("f16[2] ones", Init("ones")),
        ("i8[2] zeros", Init("zeros")),
        ("f32[2] full(0.5)", Init("full", (0.5,))),
        ("i32[2] full(-7)", Init("full", (-7,))),
        ("u8[2] full(3.0)", Init("full", (3,))),
        ("bool[2] full(0)", Init("full", (0,))),
        ("i16[2] arange", Init("arange")),
        ('f32[2] file("in/x.npy")', Init("file", ("in/x.npy",))),
        ("f32[2] file('x.npy')", Init("file", ("x.npy",))),
    ],
)
def test_every_init_parses(text, init):
    spec = parse(text)
    assert spec.init == init and spec.explicit_init
    assert parse(spec.format()) == spec


def test_whitespace_axes_and_canonical_format():
    spec = parse("  bf16 [ 1 , {seq} ,{ heads }, 64 ]  rand ( 0 , 1 )  ")
    assert spec == TensorSpec("bfloat16", (1, "seq", "heads", 64), Init("rand", (0.0, 1.0)), True)
    assert spec.format() == "bfloat16[1,{seq},{heads},64] rand(0, 1)"
    assert parse("f32[2] file('say \"hi\".npy')").format() == "float32[2] file('say \"hi\".npy')"


def test_axes_in_order_without_repeats_and_shape_resolution():
    spec = parse("f32[{seq},2,{batch},{seq}]")
    assert spec.axes() == ("seq", "batch")
    assert spec.shape({"seq": 5, "batch": 3, "unused": 9}) == (5, 2, 3, 5)
    assert parse("f32[4, 2]").axes() == ()


def test_missing_axis_names_the_axis():
    spec = parse("i64[1,{seq}] randint(0, 10)")
    with pytest.raises(TensorSpecError) as caught:
        spec.shape({"batch": 1})
    assert str(caught.value) == "axis 'seq' in \"int64[1,{seq}] randint(0, 10)\" is not in the bucket, which has batch"
    with pytest.raises(TensorSpecError, match="axis 'seq' .* which has no axes"):
        build(spec, {}, _gen())


@pytest.mark.parametrize("size", [0, -1, 2.0, True, "3"])
def test_bad_bucket_size_is_an_error(size):
    with pytest.raises(TensorSpecError) as caught:
        parse("f32[{seq}]").shape({"seq": size})
    assert str(caught.value) == (
        f"axis 'seq' in \"float32[{{seq}}]\" has bucket size {size!r}; expected a whole number of at least 1"
    )


def test_numpy_bucket_sizes_are_accepted():
    assert parse("f32[{seq}]").shape({"seq": np.int64(3)}) == (3,)


def test_scalar_spec_gives_a_zero_dimensional_tensor():
    spec = parse("f32[]")
    assert spec.dims == () and spec.shape({}) == () and spec.format() == "float32[]"
    assert build(spec, {}, _gen()).shape == ()
    assert build(parse("i32[ ] arange"), {}, _gen()).item() == 0


def test_describe_shows_the_resolved_shape_and_the_init():
    spec = parse("i64[1,{seq}] randint(0, 1000)")
    assert describe("input_ids", spec, {"seq": 128}) == "input_ids: int64[1,128] randint(0, 1000)"
    assert describe("x", parse("f32[2]"), {}) == "x: float32[2] randn"


# --- every error sentence --------------------------------------------------------------------------

ALL_ALIASES = (
    "f32, float32, bf16, bfloat16, f16, float16, f64, float64, i64, int64, i32, int32, "
    "i16, int16, i8, int8, u8, uint8, bool"
)
ALL_INITS = 'randn, rand(lo, hi), randint(lo, hi), ones, zeros, full(v), arange, file("x.npy")'
FLOAT_INITS = 'randn, rand(lo, hi), ones, zeros, full(v), arange, file("x.npy")'
INT_INITS = 'randint(lo, hi), ones, zeros, full(v), arange, file("x.npy")'


@pytest.mark.parametrize(
    "text, message",
    [
        ("f32 randn", '"f32 randn" is not a tensor spec; expected dtype[dims] init, such as "f32[2,{seq}] randn"'),
        ("", '"" is not a tensor spec; expected dtype[dims] init, such as "f32[2,{seq}] randn"'),
        ("f8[2] randn", f"unknown dtype 'f8' in \"f8[2] randn\"; expected one of {ALL_ALIASES}"),
        ("F32[2]", f"unknown dtype 'F32' in \"F32[2]\"; expected one of {ALL_ALIASES}"),
        ("f32[0,4]", "dim '0' in \"f32[0,4]\" must be a whole number of at least 1 or {axis}"),
        ("f32[2,]", "dim '' in \"f32[2,]\" must be a whole number of at least 1 or {axis}"),
        ("f32[-1]", "dim '-1' in \"f32[-1]\" must be a whole number of at least 1 or {axis}"),
        ("f32[{1x}]", "dim '{1x}' in \"f32[{1x}]\" must be a whole number of at least 1 or {axis}"),
        ("f32[seq]", "dim 'seq' in \"f32[seq]\" must be a whole number of at least 1 or {axis}"),
        ("f32[2] randomize", f"init 'randomize' in \"f32[2] randomize\" is not one of {ALL_INITS}"),
        ("f32[2] randn ones", f"init 'randn ones' in \"f32[2] randn ones\" is not one of {ALL_INITS}"),
        (
            "f32[2] randn(1)",
            "init 'randn(1)' in \"f32[2] randn(1)\" has malformed arguments; expected randn with no arguments",
        ),
        (
            "f32[2] rand(1)",
            "init 'rand(1)' in \"f32[2] rand(1)\" has malformed arguments; expected rand(lo, hi) with two numbers",
        ),
        (
            "f32[2] rand",
            "init 'rand' in \"f32[2] rand\" has malformed arguments; expected rand(lo, hi) with two numbers",
        ),
        (
            "f32[2] full(1" + "0" * 400 + ")",
            "init 'full(1"
            + "0" * 400
            + ")' in \"f32[2] full(1"
            + "0" * 400
            + ')" does not fit float32; expected v from -3.4028234663852886e+38 to 3.4028234663852886e+38',
        ),
        (
            "f32[2] rand(0, 1e999)",
            "init 'rand(0, 1e999)' in \"f32[2] rand(0, 1e999)\" has malformed arguments; "
            "expected rand(lo, hi) with two numbers",
        ),
        (
            "i32[2] randint(0, 2.5)",
            "init 'randint(0, 2.5)' in \"i32[2] randint(0, 2.5)\" has malformed arguments; "
            "expected randint(lo, hi) with two whole numbers",
        ),
        (
            "f32[2] full(x)",
            "init 'full(x)' in \"f32[2] full(x)\" has malformed arguments; expected full(v) with one number",
        ),
        (
            "f32[2] file(x.npy)",
            "init 'file(x.npy)' in \"f32[2] file(x.npy)\" has malformed arguments; "
            'expected file("x.npy") with a quoted path',
        ),
        ("f32[2] rand(1, 0)", "init 'rand(1, 0)' in \"f32[2] rand(1, 0)\" needs lo less than hi"),
        ("i64[2] randint(3, 3)", "init 'randint(3, 3)' in \"i64[2] randint(3, 3)\" needs lo less than hi"),
        ("i64[2] randn", f"init 'randn' in \"i64[2] randn\" does not fit int64; expected one of {INT_INITS}"),
        (
            "u8[2] rand(0, 1)",
            f"init 'rand(0, 1)' in \"u8[2] rand(0, 1)\" does not fit uint8; expected one of {INT_INITS}",
        ),
        ("bool[2] randn", f"init 'randn' in \"bool[2] randn\" does not fit bool; expected one of {INT_INITS}"),
        (
            "f32[2] randint(0, 3)",
            f"init 'randint(0, 3)' in \"f32[2] randint(0, 3)\" does not fit float32; expected one of {FLOAT_INITS}",
        ),
        (
            "bool[2] randint(0, 3)",
            "init 'randint(0, 3)' in \"bool[2] randint(0, 3)\" does not fit bool; expected 0 <= lo < hi <= 2",
        ),
        (
            "i8[2] randint(0, 1000)",
            "init 'randint(0, 1000)' in \"i8[2] randint(0, 1000)\" does not fit int8; expected -128 <= lo < hi <= 128",
        ),
        (
            "u8[2] randint(-1, 5)",
            "init 'randint(-1, 5)' in \"u8[2] randint(-1, 5)\" does not fit uint8; expected 0 <= lo < hi <= 256",
        ),
        (
            "i32[2] full(1.5)",
            "init 'full(1.5)' in \"i32[2] full(1.5)\" does not fit int32; "
            "expected a whole number v from -2147483648 to 2147483647",
        ),
        (
            "i8[2] full(200)",
            "init 'full(200)' in \"i8[2] full(200)\" does not fit int8; expected a whole number v from -128 to 127",
        ),
        (
            "bool[2] full(2)",
            "init 'full(2)' in \"bool[2] full(2)\" does not fit bool; expected a whole number v from 0 to 1",
        ),
        (
            "f16[2] full(1e5)",
            "init 'full(1e5)' in \"f16[2] full(1e5)\" does not fit float16; expected v from -65504.0 to 65504.0",
        ),
        (
            "f32[2] rand(0, 1e39)",
            "init 'rand(0, 1e39)' in \"f32[2] rand(0, 1e39)\" does not fit float32; "
            "expected lo and hi from -3.4028234663852886e+38 to 3.4028234663852886e+38",
        ),
    ],
)
def test_every_error_is_one_exact_sentence(text, message):
    assert _error(text) == message


# --- building ------------------------------------------------------------------------------------


def test_build_every_init_kind():
    bucket = {"seq": 3}
    assert torch.equal(build(parse("f32[2,{seq}] ones"), bucket, _gen()), torch.ones(2, 3))
    assert torch.equal(build(parse("i32[2] zeros"), bucket, _gen()), torch.zeros(2, dtype=torch.int32))
    assert torch.equal(build(parse("f64[2] full(2.5)"), bucket, _gen()), torch.full((2,), 2.5, dtype=torch.float64))
    assert torch.equal(build(parse("bool[2] full(0)"), bucket, _gen()), torch.zeros(2, dtype=torch.bool))
    assert torch.equal(build(parse("i64[2,{seq}] arange"), bucket, _gen()), torch.arange(6).reshape(2, 3))
    assert build(parse("f32[50] randn"), bucket, _gen()).std() > 0.1
    uniform = build(parse("f32[200] rand(-2, 3)"), bucket, _gen())
    assert uniform.min() >= -2 and uniform.max() <= 3
    ints = build(parse("i8[200] randint(-5, 5)"), bucket, _gen())
    assert ints.dtype == torch.int8 and ints.min() >= -5 and ints.max() < 5
    assert set(build(parse("bool[100] randint(0, 2)"), bucket, _gen()).tolist()) == {False, True}


def test_same_seed_gives_same_values_and_other_seed_differs():
    spec = parse("f32[4,{seq}] randn")
    first, again, other = (build(spec, {"seq": 8}, _gen(s)) for s in (7, 7, 8))
    assert torch.equal(first, again) and not torch.equal(first, other)
    ints = parse("i64[16] randint(0, 1000)")
    assert torch.equal(build(ints, {}, _gen(3)), build(ints, {}, _gen(3)))


def test_bfloat16_build_is_the_float32_draw_rounded():
    values = build(parse("bf16[4,8] randn"), {}, _gen(1))
    assert values.dtype == torch.bfloat16 and values.shape == (4, 8)
    assert torch.equal(values, build(parse("f32[4,8] randn"), {}, _gen(1)).to(torch.bfloat16))
    assert build(parse("bf16[3] rand(0, 1)"), {}, _gen()).dtype == torch.bfloat16


def test_file_init_loads_a_matching_npy(tmp_path):
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "x.npy", data)
    relative = build(parse('f32[2,{seq}] file("x.npy")'), {"seq": 3}, _gen(), base_dir=tmp_path)
    assert torch.equal(relative, torch.from_numpy(data))
    absolute = build(parse(f"f32[2,3] file('{tmp_path / 'x.npy'}')"), {}, _gen())
    assert torch.equal(absolute, torch.from_numpy(data))
    np.save(tmp_path / "big.npy", np.arange(4, dtype=">i8"))  # non-native byte order still loads
    assert build(parse("i64[4] file('big.npy')"), {}, _gen(), base_dir=tmp_path).tolist() == [0, 1, 2, 3]
    np.save(tmp_path / "s.npy", np.float32(1.5))
    assert build(parse("f32[] file('s.npy')"), {}, _gen(), base_dir=tmp_path).shape == ()
    bf16 = build(parse("bf16[2,3] file('x.npy')"), {}, _gen(), base_dir=tmp_path)
    assert bf16.dtype == torch.bfloat16 and bf16.tolist() == data.tolist()


def test_file_init_errors_name_the_file(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((3, 4), dtype=np.float32))
    path = tmp_path / "x.npy"
    with pytest.raises(TensorSpecError) as caught:
        build(parse('f32[2,4] file("x.npy")'), {}, _gen(), base_dir=tmp_path)
    assert str(caught.value) == (f'file "{path}" for "float32[2,4] file("x.npy")" has shape (3, 4); expected (2, 4)')
    with pytest.raises(TensorSpecError) as caught:
        build(parse('f16[3,4] file("x.npy")'), {}, _gen(), base_dir=tmp_path)
    assert str(caught.value) == f'file "{path}" for "float16[3,4] file("x.npy")" holds float32; expected float16'
    np.save(tmp_path / "d.npy", np.zeros((2,), dtype=np.float64))
    with pytest.raises(TensorSpecError) as caught:
        build(parse('bf16[2] file("d.npy")'), {}, _gen(), base_dir=tmp_path)
    assert str(caught.value) == (
        f'file "{tmp_path / "d.npy"}" for "bfloat16[2] file("d.npy")" holds float64; '
        "expected float32 (numpy has no bfloat16)"
    )
    with pytest.raises(TensorSpecError) as caught:
        build(parse('f32[2] file("gone.npy")'), {}, _gen(), base_dir=tmp_path)
    assert str(caught.value) == f'file "{tmp_path / "gone.npy"}" for "float32[2] file("gone.npy")" does not exist'
    (tmp_path / "junk.npy").write_text("not numpy")
    with pytest.raises(TensorSpecError, match=r"is not a readable \.npy array"):
        build(parse('f32[2] file("junk.npy")'), {}, _gen(), base_dir=tmp_path)


def test_import_stays_light():
    # Load the file on its own so the check is about this module, not whatever its parent packages import.
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('tensors_alone', {str(tensors.__file__)!r})\n"
        "module = sys.modules['tensors_alone'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "module.parse('f32[2,{seq}] randn').shape({'seq': 3})\n"
        "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- properties ----------------------------------------------------------------------------------


@st.composite
def inits_for(draw, dtype: str, with_file: bool = False) -> Init:
    if dtype in FLOAT_DTYPES:
        limit = 1e4 if dtype == "float16" else 1e30
        number = st.floats(-limit, limit, allow_nan=False, allow_infinity=False)
        low, high = sorted(draw(st.lists(number, min_size=2, max_size=2, unique=True).filter(lambda p: p[0] != p[1])))
        options = [Init("randn"), Init("rand", (low, high)), Init("full", (draw(number),))]
    else:
        lowest, highest = INT_RANGES[dtype]
        bound = st.integers(lowest, min(highest + 1, 2**63 - 1))
        low, high = sorted(draw(st.lists(bound, min_size=2, max_size=2, unique=True)))
        options = [Init("randint", (low, high)), Init("full", (draw(st.integers(lowest, highest)),))]
    options += [Init("ones"), Init("zeros"), Init("arange")]
    if with_file:
        path = draw(st.text("ab/._- '\"", min_size=1, max_size=8).filter(lambda p: not ('"' in p and "'" in p)))
        options.append(Init("file", (path,)))
    return draw(st.sampled_from(options))


@st.composite
def specs(draw, with_file: bool = False) -> TensorSpec:
    dtype = draw(st.sampled_from(CANONICAL))
    dims = tuple(draw(st.lists(st.one_of(st.integers(1, 4), st.sampled_from(AXES)), max_size=4)))
    if draw(st.booleans()):
        return TensorSpec(dtype, dims, draw(inits_for(dtype, with_file)), explicit_init=True)
    return TensorSpec(dtype, dims, DEFAULT_INITS[dtype], explicit_init=False)


@st.composite
def specs_with_buckets(draw):
    spec = draw(specs())
    bucket = {axis: draw(st.integers(1, 4)) for axis in spec.axes()}
    bucket.update(draw(st.dictionaries(st.sampled_from(["extra", "other"]), st.integers(1, 4))))
    return spec, bucket


@settings(max_examples=100, deadline=None)
@given(specs(with_file=True))
def test_format_round_trips(spec):
    assert parse(spec.format()) == spec


@settings(max_examples=100, deadline=None)
@given(specs_with_buckets(), st.integers(0, 2**32))
def test_built_tensor_matches_shape_dtype_and_range(spec_and_bucket, seed):
    spec, bucket = spec_and_bucket
    tensor = build(spec, bucket, _gen(seed))
    assert tuple(tensor.shape) == spec.shape(bucket)
    assert tensor.dtype == getattr(torch, spec.dtype)
    if spec.init.kind == "randint":
        low, high = spec.init.args
        values = tensor.to(torch.int64)
        assert bool((values >= low).all()) and bool((values < high).all())


@settings(max_examples=100, deadline=None)
@given(specs_with_buckets(), st.data())
def test_bucket_missing_an_axis_names_it(spec_and_bucket, data):
    spec, bucket = spec_and_bucket
    if not spec.axes():
        return
    missing = data.draw(st.sampled_from(spec.axes()))
    del bucket[missing]
    with pytest.raises(TensorSpecError, match=f"^axis '{missing}' in "):
        spec.shape(bucket)
    with pytest.raises(TensorSpecError, match=f"^axis '{missing}' in "):
        build(spec, bucket, _gen())
