"""A sweep's grid: ``--over`` parsing by the spec schema, cartesian and zip, one point per bucket, and what is wrong said precisely."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.presets import load_preset
from neffbench.spec import from_dict, to_dict
from neffbench.sweeps import PlanError, plan, sweepable
from neffbench.sweeps.grid import MAX_POINTS, parse_value, split_values

SEED = load_preset("seed")


def _messages(p) -> list[str]:
    return [problem.message for problem in p.problems]


def test_the_grid_is_the_cartesian_product_and_each_bucket_is_a_point():
    p = plan(SEED, ["compiler.optlevel=1,2", "inputs.num_tokens=1,[8,32]"], backend="cpu-check")
    assert p.problems == [] and p.count == 6 and len(p.valid) == 6
    got = [(pt.values["compiler.optlevel"], pt.bucket["num_tokens"]) for pt in p.points]
    assert got == [(1, 1), (1, 8), (1, 32), (2, 1), (2, 8), (2, 32)]
    for pt in p.points:
        assert pt.spec.compiler.optlevel == pt.values["compiler.optlevel"]
        assert pt.spec.inputs.num_tokens == (pt.bucket["num_tokens"],)  # a single-bucket spec: one job
    assert [pt.label(p.short_names) for pt in p.points[:3]] == [
        "optlevel=1 num_tokens=1",
        "optlevel=1 num_tokens=8",
        "optlevel=1 num_tokens=32",
    ]


def test_a_spec_with_several_buckets_gives_a_point_per_bucket_even_when_they_are_not_swept():
    p = plan(SEED, ["compiler.target=trn1,trn2"], backend="cpu-check")
    assert p.count == 2
    import dataclasses

    several = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(1, 8)))
    p = plan(several, ["compiler.target=trn1,trn2"], backend="cpu-check")
    assert [(pt.values["compiler.target"], pt.bucket) for pt in p.points] == [
        ("trn1", {"num_tokens": 1}),
        ("trn1", {"num_tokens": 8}),
        ("trn2", {"num_tokens": 1}),
        ("trn2", {"num_tokens": 8}),
    ]
    assert p.points[1].label(p.short_names) == "target=trn1 num_tokens=8"


def test_zip_pairs_lists_of_one_length():
    p = plan(SEED, ["compiler.target=trn1,trn2", "inputs.dtype=float32,bfloat16"], zip=True, backend="cpu-check")
    assert [tuple(pt.values.values()) for pt in p.points] == [("trn1", "float32"), ("trn2", "bfloat16")]
    bad = plan(SEED, ["compiler.target=trn1,trn2", "inputs.dtype=float32"], zip=True)
    assert bad.points == [] and _messages(bad) == [
        "--zip pairs lists of one length: compiler.target has 2, inputs.dtype has 1 value(s)"
    ]


def test_invalid_points_carry_their_problems_and_the_others_stay_valid():
    p = plan(SEED, ["compiler.optlevel=2,4,x"], backend="cpu-check")
    assert [pt.valid for pt in p.points] == [True, False, False]
    assert [str(e) for e in p.points[1].errors] == [
        "error: compiler.optlevel: Opt level must be between 1 and 3; got 4."
    ]
    assert [str(e) for e in p.points[2].errors] == ["error: compiler.optlevel: must be a whole number, got 'x'."]
    assert p.points[1].spec is None and p.points[1].memory is None
    warned = plan(SEED, ["compiler.target=trn1"], backend="cpu-check").points[0]
    assert warned.valid and any(w.field == "compiler.lnc" and w.severity == "warning" for w in warned.problems)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ("compiler.optlvl=1", "[compiler] has no field 'optlvl'. Did you mean 'compiler.optlevel'?"),
        ("model=1", "'model' is a section: name one of its fields"),
        ("kernel=rms_norm", "the kernel cannot be swept"),
        ("workdir=a,b", "the workdir cannot be swept"),
        ("compiler.optlevel", "--over 'compiler.optlevel' is not FIELD=V1,V2,..."),
        ("compiler.optlevel=", "compiler.optlevel: give one or more values"),
        ("compiler.optlevel=1,,2", "compiler.optlevel: give one or more values"),
        ("inputs.num_tokens=[1,8", "has an unclosed bracket"),
        ("name.x=1", "'name' is a top-level field, not a table"),
        ("rope.base.x=1", "'rope.base' is not a table"),
        ("nosuch=1", "the rope spec has no field 'nosuch'"),
    ],
)
def test_a_wrong_over_is_one_sentence_naming_what_is_wrong(over, message):
    p = plan(SEED, [over])
    assert p.points == [] and len(p.problems) == 1 and message in p.problems[0].message


def test_every_wrong_over_is_reported_and_a_field_swept_twice_too():
    p = plan(SEED, ["compiler.optlvl=1", "inputs.dtyp=float32"])
    assert len(p.problems) == 2
    twice = plan(SEED, ["compiler.auto_cast=none", "compiler.auto-cast=all"])  # dashes read as the CLI's options
    assert _messages(twice) == ["compiler.auto_cast is swept twice: give all its values in one --over"]
    assert _messages(plan(SEED, [])) == ["name at least one field to sweep: --over FIELD=V1,V2,..."]


def test_a_huge_grid_is_refused_before_it_is_built():
    values = ",".join(str(n) for n in range(1, 200))
    p = plan(SEED, [f"inputs.num_tokens={values}", f"rope.max_pos={values}"])
    assert p.points == [] and f"a sweep takes at most {MAX_POINTS:,}" in p.problems[0].message


def test_values_are_read_by_the_field_type():
    assert parse_value("8", int) == 8
    assert parse_value("1e-6", float) == 1e-6
    assert parse_value("true", bool) is True
    assert parse_value("trn2", str) == "trn2" and parse_value('"8"', str) == "8" and parse_value("8", str) == "8"
    assert parse_value("--verbose info", tuple[str, ...]) == ["--verbose", "info"]
    assert parse_value('["-O1"]', tuple[str, ...]) == ["-O1"]
    assert parse_value("[1,8]", tuple[int, ...]) == [1, 8]
    p = plan(
        SEED, ["compiler.extra_args=--verbose info,--enable-saturate-infinity", "rope.base=1e4"], backend="cpu-check"
    )
    assert [pt.spec.compiler.extra_args for pt in p.points] == [("--verbose", "info"), ("--enable-saturate-infinity",)]
    assert p.points[0].spec.rope.base == 10000.0


def test_module_tables_and_kwargs_are_fields_too(tmp_path):
    spec = ModuleCompileSpec(
        name="mlp",
        workdir=str(tmp_path),
        module=ModuleSection(entry="torch.nn:Linear", kwargs={"in_features": 4, "out_features": 2}),
        inputs={"input": "f32[{batch},4]"},
        buckets={"batch": (1,)},
    )
    names = [f.name for f in sweepable(spec)]
    assert {"module.kwargs.in_features", "inputs.input", "buckets.batch", "compiler.optlevel"} <= set(names)
    assert "workdir" not in names and "kernel" not in names
    p = plan(spec, ["buckets.batch=1,[2,4]", "module.kwargs.out_features=2,3"], backend="cpu-check")
    assert p.problems == [] and p.count == 6
    assert [(pt.bucket["batch"], pt.spec.module.kwargs["out_features"]) for pt in p.points][:3] == [
        (1, 2),
        (1, 3),
        (2, 2),
    ]
    assert p.points[0].label(p.short_names) == "batch=1 out_features=2"
    bad = plan(spec, ["inputs.input=f32[{batch},4],f32[{nope},4]"], backend="cpu-check")
    assert [pt.valid for pt in bad.points] == [True, False]


def test_a_plan_from_a_mapping_is_the_same_as_from_the_command_line():
    a = plan(SEED, ["compiler.optlevel=1,2", "inputs.num_tokens=1,8"], backend="cpu-check")
    b = plan(SEED, {"compiler.optlevel": [1, 2], "inputs.num_tokens": "1,8"}, backend="cpu-check")
    assert [pt.spec for pt in a.points] == [pt.spec for pt in b.points]


def test_memory_estimates_by_kernel_target_backend_and_override():
    from neffbench.kernels import registry

    generic = registry.get("rms_norm").default_spec()
    cpu = plan(generic, ["compiler.optlevel=1"], backend="cpu-check").points[0].memory
    trn1, trn2 = (p.memory for p in plan(generic, ["compiler.target=trn1,trn2"], backend="neuron").points)
    assert cpu.source == trn1.source == "default" and trn2.bytes > trn1.bytes > cpu.bytes >= 2**30
    given_ = plan(SEED, ["compiler.optlevel=1"], backend="neuron", memory_per_job=3 * 2**30).points[0].memory
    assert (given_.bytes, given_.source, given_.text()) == (3 * 2**30, "user", "3.0 GiB (as given)")
    small, big = (p.memory for p in plan(SEED, ["inputs.num_tokens=1,65536"], backend="cpu-check").points)
    assert small.source == "kernel" and big.bytes > small.bytes + 2**30  # RoPE's own estimate grows with its data


def test_the_spec_round_trips_through_plain_dicts_as_points_rely_on():
    assert from_dict(to_dict(SEED)) == SEED


_ATOM = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6).map(str),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,8}", fullmatch=True),
    st.lists(st.integers(0, 99), min_size=1, max_size=4).map(lambda xs: "[" + ",".join(map(str, xs)) + "]"),
    st.from_regex(r"[a-z ,]{0,6}", fullmatch=True).map(lambda s: f'"{s}"'),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_ATOM, min_size=1, max_size=6))
def test_split_values_gives_back_each_value_whatever_commas_it_holds(texts):
    assert split_values(",".join(texts)) == texts


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3, unique=True),
    st.lists(st.integers(1, 64), min_size=1, max_size=3, unique=True),
    st.booleans(),
)
def test_every_combination_is_a_point_exactly_once(optlevels, tokens, zipped):
    if zipped and len(optlevels) != len(tokens):
        with pytest.raises(PlanError):
            from neffbench.sweeps.grid import combinations, parse_over

            combinations(
                [
                    parse_over(SEED, f"compiler.optlevel={','.join(map(str, optlevels))}"),
                    parse_over(SEED, f"inputs.num_tokens={','.join(map(str, tokens))}"),
                ],
                zipped=True,
            )
        return
    p = plan(SEED, {"compiler.optlevel": optlevels, "inputs.num_tokens": tokens}, zip=zipped, backend="cpu-check")
    expected = list(zip(optlevels, tokens)) if zipped else list(itertools.product(optlevels, tokens))
    assert [(pt.spec.compiler.optlevel, pt.bucket["num_tokens"]) for pt in p.points] == expected
    assert [pt.index for pt in p.points] == list(range(len(expected)))


def test_the_sweep_package_imports_neither_qt_nor_ray():
    code = (
        "import sys, neffbench.sweeps, neffbench.sweeps.ray_executor, neffbench.sweeps.ray_task, "
        "neffbench.cli.sweep_cmd\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'ray', "
        "'torch'))\nprint(','.join(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_one_probe_answers_for_every_point_that_builds_the_same_module(tmp_path):
    """Points differing only in compiler options or buckets share one probe (the kernel's prepare_key); a
    different constructor argument is a different build, probed on its own."""
    from neffbench.sweeps.preparing import prepare_points

    spec = ModuleCompileSpec(
        name="mlp",
        workdir=str(tmp_path),
        module=ModuleSection(entry="torch.nn:Linear", kwargs={"in_features": 4, "out_features": 2}),
        inputs={"input": "f32[{batch},4]"},
        buckets={"batch": (1,)},
    )
    asked: list[dict] = []

    def ask(kind, payload, **_):
        asked.append(payload["spec"]["module"]["kwargs"])
        return {"ok": True, "sources": {"digest": "d", "files": []}}

    same = plan(spec, ["compiler.optlevel=1,2", "buckets.batch=1,[2,4]"], backend="cpu-check")
    assert prepare_points(same, tmp_path, ask) == 1 and len(asked) == 1
    assert all(pt.prepared is not None for pt in same.points)
    asked.clear()
    two = plan(spec, ["module.kwargs.out_features=2,3", "compiler.optlevel=1,2"], backend="cpu-check")
    assert prepare_points(two, tmp_path, ask) == 2
    assert sorted(a["out_features"] for a in asked) == [2, 3]


def test_the_window_names_points_in_the_dialogs_words_counted_from_one():
    from neffbench.views.sweep import point_number

    swept = plan(load_preset("seed"), ["compiler.optlevel=1,2", "inputs.num_tokens=8"])
    assert swept.words == {0: "Opt level 1, Tokens (buckets) 8", 1: "Opt level 2, Tokens (buckets) 8"}
    assert swept.labels[0] == "optlevel=1 num_tokens=8"  # the command line keeps the spec's keys
    assert [point_number(p.index) for p in swept.points] == [1, 2]
