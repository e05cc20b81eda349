"""int64 inputs: values beyond int32 are an error where the compile downcasts them and a warning elsewhere, ids
that fit get no word at all, and --native-int64=enabled is refused on the targets that cannot run it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.presets import load_preset
from neffbench.schema.compiler import CompilerSpec, native_int64
from neffbench.schema.problems import Problem
from neffbench.spec import to_dict, validate
from neffbench.workers.probe import check
from tests.cli import neffbench
from tests.data.modules.hf_models import HF_MODELS
from tests.fakes import fake_env

DATA = Path(__file__).resolve().parent / "data" / "modules"
IDS = f"{DATA}/wide_ints.py:HashedIds"
WIDE = "i64[2,4] randint(4294967296, 1099511627776)"
HELD = "holds values from 2**32 to 2**40 - 1 (randint(4294967296, 1099511627776)), beyond int32"
KEEP = "keep them within int32 (-2**31 to 2**31 - 1)"
REFUSAL = (
    '--native-int64=enabled is not for target {}: neuronx-cc documents it as "Only available on trn2 and later" '
    '("On earlier targets int64 operations are always downcast to int32"); remove it, or compile for trn2 or later.'
)
NATIVE = ("--native-int64=enabled",)


def _spec(
    inputs: dict[str, str], target: str = "trn1", extra: tuple[str, ...] = (), buckets=None, **module
) -> ModuleCompileSpec:
    return ModuleCompileSpec(
        name="t",
        module=ModuleSection(entry=IDS, **module),
        inputs=inputs,
        buckets=buckets or {},
        compiler=CompilerSpec(target=target, extra_args=extra),
    )


def _problems(report: dict) -> list[tuple[str, str]]:
    return [(p["severity"], p["message"]) for p in report.get("problems", [])]


# ---- the compiler option ---------------------------------------------------------------------


def test_native_int64_is_read_as_neuronx_cc_reads_it():
    assert native_int64(("--native-int64=enabled",)) and native_int64(("--native-int64", "enabled"))
    assert not native_int64(("--native-int64=disabled",)) and not native_int64(("--native-int64=default",))
    assert not native_int64(("--native-int64=enabled", "--native-int64=disabled"))  # the right-most wins
    assert native_int64(("--native-int64=disabled", "--verbose", "info", "--native-int64", "enabled"))


@pytest.mark.parametrize("target", ["inf2", "trn1", "trn1n"])
def test_native_int64_on_a_target_without_it_is_refused_with_the_docs_words(target):
    seed = load_preset("seed")
    spec = dataclasses.replace(seed, compiler=dataclasses.replace(seed.compiler, target=target, extra_args=NATIVE))
    assert Problem("compiler.extra_args", REFUSAL.format(target), "error") in validate(spec)


@pytest.mark.parametrize(
    "extra", [NATIVE, ("--native-int64", "disabled"), ("--native-int64=enabled", "--native-int64=disabled")]
)
def test_native_int64_is_accepted_where_it_runs_and_any_other_value_anywhere(extra):
    seed = load_preset("seed")
    for target in ("trn2", "trn3"):
        spec = dataclasses.replace(seed, compiler=dataclasses.replace(seed.compiler, target=target, extra_args=extra))
        assert not [p for p in validate(spec) if p.field == "compiler.extra_args"]
    if extra != NATIVE:
        trn1 = dataclasses.replace(seed, compiler=dataclasses.replace(seed.compiler, target="trn1", extra_args=extra))
        assert not [p for p in validate(trn1) if p.field == "compiler.extra_args"]


def test_a_sweep_refuses_the_points_whose_target_cannot_run_native_int64():
    from neffbench.sweeps import plan

    seed = load_preset("seed")
    spec = dataclasses.replace(seed, compiler=dataclasses.replace(seed.compiler, lnc=None, extra_args=NATIVE))
    p = plan(spec, ["compiler.target=trn1,trn2"], backend="cpu-check")
    assert [pt.valid for pt in p.points] == [False, True]
    assert [str(e) for e in p.points[0].errors] == [f"error: compiler.extra_args: {REFUSAL.format('trn1')}"]


@pytest.mark.slow
def test_check_and_compile_refuse_it_before_anything_starts(tmp_path):
    args = [
        f"{DATA}/wide_ints.py:HashedIds",
        "--input",
        "ids:i64[2,4] randint(0, 97)",
        "--extra-args=--native-int64=enabled",
    ]
    checked = neffbench("check", *args)
    assert checked.returncode == 2 and f"error: compiler.extra_args: {REFUSAL.format('trn1')}" in checked.stderr
    compiled = neffbench("compile", *args, "--workdir", str(tmp_path / "wd"))
    assert compiled.returncode == 2 and f"error: compiler.extra_args: {REFUSAL.format('trn1')}" in compiled.stderr
    assert not (tmp_path / "wd").exists() or not any((tmp_path / "wd").iterdir())  # no job started


@pytest.mark.gui
def test_the_form_shows_the_refusal_under_extra_args(window, qtbot, tmp_path):
    path = tmp_path / "native.toml"
    path.write_text(
        'kernel = "rope"\nname = "native"\n[compiler]\ntarget = "trn1"\nextra_args = ["--native-int64=enabled"]\n'
    )
    assert window.open_spec(path)
    label = window.form.current().problem_label("compiler.extra_args")
    assert label.isVisible()
    assert REFUSAL.format("trn1") in label.text().replace("\u200b", "")
    assert not window.compile_action.isEnabled()


# ---- pre-flight: what the values declare ---------------------------------------------------------


@pytest.mark.parametrize(
    "tensor_spec",
    [
        "i64[2,4] randint(0, 2147483648)",
        "i64[2,4] randint(-2147483648, 0)",
        "i64[2,4] full(2147483647)",
        "i64[2,4] arange",
    ],
)
def test_ids_that_fit_int32_get_no_warning_on_any_backend(tensor_spec):
    for backend in ("cpu-check", "neuron"):
        report = check({"spec": to_dict(_spec({"ids": tensor_spec})), "backend": backend})
        assert report["ok"] is True and _problems(report) == [], backend


@pytest.mark.parametrize(
    "backend, target, extra, severity, fate",
    [
        (
            "neuron",
            "trn1",
            (),
            "error",
            f"neuronx-cc downcasts int64 to int32 for --target trn1, so they would wrap: {KEEP}, or compile for trn2 "
            "or later with --native-int64=enabled (neuronx-cc 2.27+).",
        ),
        (
            "torchneuron",
            "trn2",
            (),
            "error",
            "neuronx-cc downcasts int64 to int32 unless told --native-int64=enabled, so they would wrap: add "
            f"--native-int64=enabled to the extra args (neuronx-cc 2.27+), or {KEEP}.",
        ),
        (
            "cpu-check",
            "trn1",
            (),
            "warning",
            "no NEFF is made here, but neuronx-cc downcasts int64 to int32 for --target trn1, so on Neuron they would "
            f"wrap: {KEEP}, or compile for trn2 or later with --native-int64=enabled (neuronx-cc 2.27+).",
        ),
        (
            "neuron",
            "trn2",
            NATIVE,
            "warning",
            "--native-int64=enabled keeps them int64 on trn2, except in operations without an int64 datapath (matrix "
            "multiplication, scatter-with-compute, all-reduce and reduce-scatter compute in floating point, integer "
            "power in int32) as --implicit-integer-downcast permits.",
        ),
    ],
    ids=["downcast-trn1", "downcast-trn2", "no-neff", "native"],
)
def test_ids_beyond_int32_are_an_error_where_they_would_wrap(backend, target, extra, severity, fate):
    report = check({"spec": to_dict(_spec({"ids": WIDE}, target, extra)), "backend": backend})
    assert _problems(report) == [(severity, f"input 'ids' {HELD}: {fate}")]
    assert report["ok"] is (severity == "warning")


def test_a_file_declares_what_it_holds(tmp_path):
    path = tmp_path / "ids.npy"
    np.save(path, np.array([[0, 5, 2**35, 7]], dtype=np.int64))
    report = check({"spec": to_dict(_spec({"ids": f'i64[1,4] file("{path}")'})), "backend": "neuron"})
    ((severity, message),) = _problems(report)
    assert severity == "error"
    assert message.startswith(f"input 'ids' holds values from 0 to 2**35 (file(\"{path}\")), beyond int32: ")


def test_an_examples_function_is_judged_by_its_values_and_negative_values_count_too():
    report = check(
        {"spec": to_dict(_spec({}, examples=f"{DATA}/wide_ints.py:big_ids", buckets={"batch": (1,), "seq": (4,)}))}
    )
    ((severity, message),) = _problems(report)
    assert severity == "warning"
    assert message.startswith("input 'ids' holds values from 2**33 to 8589934595 (the example's values), beyond int32")
    low = check({"spec": to_dict(_spec({"ids": "i64[2] full(-1099511627776)"})), "backend": "neuron"})
    assert _problems(low)[0][1].startswith("input 'ids' holds the value -2**40 (full(-1099511627776)), beyond int32")


def _hf_spec(name: str):
    from neffbench.spec import from_dict

    model = HF_MODELS[name]
    return from_dict(
        {
            "name": f"hf-{name}",
            "kernel": "module",
            "module": {
                "entry": model["entry"],
                "call": "factory",
                "kwargs": {"config": {"entry": model["config"], "kwargs": model["config_kwargs"]}},
                "constants": model["constants"],
            },
            "inputs": model["inputs"],
            "buckets": model["buckets"],
        }
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.parametrize("name", sorted(HF_MODELS))
def test_no_tiny_hugging_face_model_gets_an_int64_word(name):
    report = check({"spec": to_dict(_hf_spec(name)), "backend": "neuron"})
    assert report["ok"] is True, report.get("error")
    assert not [m for _, m in _problems(report) if "int64" in m or "int32" in m]


# ---- compiles ----------------------------------------------------------------------------------


def _record(workdir: Path) -> dict:
    (path,) = workdir.glob("*/job.json")
    return json.loads(path.read_text())


@pytest.mark.slow
def test_a_neuron_compile_of_ids_beyond_int32_fails_before_the_compiler_runs(tmp_path):
    args = ["compile", IDS, "--input", f"ids:{WIDE}", "--backend", "neuron"]
    failed = neffbench(*args, "--workdir", str(tmp_path / "trn1"), env=fake_env("success"))
    assert failed.returncode == 1
    rec = _record(tmp_path / "trn1")
    assert rec["reason"].startswith(
        f"pre-flight: input 'ids' {HELD}: neuronx-cc downcasts int64 to int32 for --target trn1"
    )
    assert rec["neffs"] == [] and "compiling" not in rec["stages"]
    native = neffbench(
        *args, "--target", "trn2", "--extra-args=--native-int64=enabled", "--workdir", str(tmp_path / "trn2"),
        env=fake_env("success"),
    )  # fmt: skip
    assert native.returncode == 0, native.stderr[-2000:]
    rec = _record(tmp_path / "trn2")
    assert rec["outcome"] == "succeeded" and len(rec["neffs"]) == 1
    assert "--native-int64=enabled" in rec["compiler_command"]["actual"]
    (warning,) = [p["message"] for p in rec["preflight"]["problems"] if "int64" in p["message"]]
    assert warning.startswith(f"input 'ids' {HELD}: --native-int64=enabled keeps them int64 on trn2")
    cpu = neffbench(*args[:-2], "--backend", "cpu-check", "--workdir", str(tmp_path / "cpu"))
    assert cpu.returncode == 0, cpu.stderr[-2000:]
    rec = _record(tmp_path / "cpu")
    assert rec["outcome"] == "succeeded" and rec["numerics"]["match"] is True
    assert any(
        p["message"].startswith(f"input 'ids' {HELD}: no NEFF is made here") for p in rec["preflight"]["problems"]
    )
