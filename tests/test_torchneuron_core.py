"""The torchneuron backend without a worker: flavours, the backend choice, the environment and flags a job
sets, the command and the warnings, NEFF discovery, the explanations, the log forms, doctor and the status bar."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neffbench import doctor
from neffbench.backends import torchneuron_options as tn
from neffbench.backends.registry import CHOICES as BACKENDS
from neffbench.backends.registry import LABELS as BACKEND_LABELS
from neffbench.backends.torchneuron_errors import compile_failure, graph_break
from neffbench.compilerlog.exits import exit_status_in
from neffbench.compilerlog.lines import parse_line
from neffbench.jobs import records
from neffbench.kernels import registry as kernels
from neffbench.presets import load_preset
from neffbench.toolchain.choose import choose_backend
from neffbench.toolchain.facts import Component, Facts
from neffbench.toolchain.flavour import neuronx_flavour, warm_preload
from tests.cli import neffbench
from tests.fakes import PYTHON_DIR, TORCHNEURON_DIR, fake_env, torchneuron_env

REPO = Path(__file__).resolve().parents[1]
SEED = load_preset("seed")  # target trn2, LNC 2, model type generic


def _spec(**compiler):
    return dataclasses.replace(SEED, compiler=dataclasses.replace(SEED.compiler, **compiler))


def _facts(version: str, flavour: str | None, devices: tuple[str, ...] = ()) -> Facts:
    c = Component
    return Facts(
        python=c("python", True, "3.11"),
        torch=c("torch", True, "2.13.0"),
        pyside6=c("PySide6", True, "6.8"),
        pyqtgraph=c("pyqtgraph", True, "0.13"),
        torch_neuronx=c("torch_neuronx", True, version, "imports"),
        neuronx_cc=c("neuronx-cc", True, "2.23.0", "/usr/bin/neuronx-cc"),
        devices=list(devices),
        torch_neuronx_flavour=flavour,
    )


# ---- flavours and the backend choice ----


@pytest.mark.parametrize(
    "version, has_trace, flavour",
    [
        ("2.13.3.0+abc", None, "native"),
        ("2.14.3.0", True, "native"),
        ("2.9.0.2.15.32035", True, "legacy"),
        ("2.9.0.2.15", None, "legacy"),
        ("unknown", False, "native"),
        (None, True, "legacy"),
        (None, None, None),
        ("2.13.2.9", True, "legacy"),
    ],
)
def test_the_flavour_is_told_by_version_or_by_trace(version, has_trace, flavour):
    assert neuronx_flavour(version, has_trace) == flavour


@pytest.mark.parametrize(("fake", "dynamo"), [(TORCHNEURON_DIR, True), (PYTHON_DIR, False), (None, False)])
def test_a_warm_server_preloads_dynamo_only_where_torchneuron_is_installed(monkeypatch, fake, dynamo):
    if fake is not None:
        monkeypatch.syspath_prepend(str(fake))
    assert warm_preload()[:2] == ("torch", "torch.distributed.tensor")
    assert ("torch._dynamo" in warm_preload()) is dynamo


def test_auto_chooses_torchneuron_for_the_native_flavour_and_says_why():
    name, why = choose_backend("auto", _facts("2.13.3.0", "native"))
    assert name == "torchneuron" and "TorchNeuron (version 2.13.3 or later)" in why and "neuronx-cc is on PATH" in why
    name, why = choose_backend("auto", _facts("2.9.0.2.15", "legacy"))
    assert name == "neuron" and "legacy XLA flavour" in why
    assert choose_backend("torchneuron", _facts("2.9.0", "legacy"))[0] == "torchneuron"  # refused in the worker


def test_doctor_advice_names_the_flavour_and_the_trainium_requirement():
    advice = doctor.advice(_facts("2.13.3.0", "native"))
    assert advice[0].startswith('Compiles use the torchneuron backend, torch.compile(backend="neuron")')
    assert any("TorchNeuron, the native flavour" in a for a in advice)
    assert any("compiles on a Trn2/Trn3 instance only and this host has no Neuron device" in a for a in advice)
    on_trn2 = doctor.advice(_facts("2.13.3.0", "native", ("/dev/neuron0",)))
    assert any("a Neuron device is present (/dev/neuron0)" in a for a in on_trn2)
    legacy = doctor.advice(_facts("2.9.0.2.15", "legacy"))
    assert legacy[0].startswith("Compiles use the neuron backend, torch_neuronx.trace (legacy, SDK ≤ 2.31)")


def test_the_cli_offers_every_backend_of_the_protocol():
    from neffbench.cli import check_cmd, compile_cmd

    assert "torchneuron" in BACKENDS and set(BACKEND_LABELS) == set(BACKENDS)
    for module in (compile_cmd, check_cmd):
        parser = argparse.ArgumentParser()
        module.register(parser.add_subparsers())
        action = next(
            a
            for sub in parser._subparsers._group_actions
            for p in sub.choices.values()
            for a in p._actions
            if a.dest == "backend"
        )
        assert tuple(action.choices) == BACKENDS


def test_auto_is_predicted_from_the_installed_distribution(monkeypatch):
    from neffbench.jobs import cache

    monkeypatch.syspath_prepend(str(torchneuron_env()["PYTHONPATH"].split(os.pathsep)[0]))
    monkeypatch.setenv("PATH", fake_env()["PATH"])
    assert cache.predicted_backend("auto") == "torchneuron"
    assert cache.key(SEED, "torchneuron")["compiler_args"]["opt_level"] == "-O2"


# ---- what a job sets and runs ----


def test_every_place_torchneuron_writes_is_in_the_job(tmp_path):
    env = tn.job_env(tmp_path, SEED)
    assert env["TORCH_NEURONX_NEFF_CACHE_DIR"] == str(tmp_path / "neff_cache")
    assert env["TORCH_NEURONX_DEBUG_DIR"] == str(tmp_path / "debug")
    assert env["TORCH_NEURONX_LOG_FILE"] == str(tmp_path / "torchneuron.log")
    assert (
        env["TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS"],
        env["TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION"],
        env["TORCH_NEURONX_LOG_LEVEL"],
    ) == ("1", "1", "2")
    assert env["NEURON_COMPILER_OPT_LEVEL"] == "-O2"
    flags = env["NEURON_CC_FLAGS"].split()
    assert flags[-2:] == ["--logfile", str(tmp_path / "compiler" / "log-neuron-cc.txt")]
    assert "--target" not in flags and "--lnc" not in flags and "-O2" not in flags  # TorchNeuron passes those
    assert flags[:4] == ["--verbose", "info", "--auto-cast", "none"]


def test_a_logfile_path_with_a_blank_is_left_out(tmp_path):
    assert "--logfile" not in tn.cc_flags(SEED, tmp_path / "a b" / "compiler")


def test_the_command_shows_what_torchneuron_adds_before_the_flags():
    spec = _spec(optlevel=3, auto_cast="matmult", extra_args=("--enable-saturate-infinity",))
    cmd = tn.expected_command(spec, tn.Host("trn2", "the instance type", 2, tn.LNC_ENV), tn.cc_flags(spec))
    assert cmd[:12] == [
        "neuronx-cc",
        "compile",
        "<tmp>/module.mlir",
        "--framework",
        "XLA",
        "--target",
        "trn2",
        "--lnc",
        "2",
        "-O3",
        "--model-type",
        "transformer",
    ]
    assert cmd.index("--auto-cast=none") < cmd.index("--auto-cast") < cmd.index("--enable-saturate-infinity")


def test_target_and_lnc_come_from_the_host_and_the_warning_says_which():
    host = tn.Host("trn2", "the instance type", 1, tn.LNC_ENV)
    by_field = {p.field: p for p in tn.problems(_spec(target="trn1", lnc=2), host)}
    assert by_field["compiler.target"].message == (
        "the spec's target is trn1, but TorchNeuron compiles for trn2 (the instance type): trn2 will be used."
    )
    assert "LNC 1 will be used" in by_field["compiler.lnc"].message
    assert all(p.severity == "warning" for p in by_field.values())
    assert {p.field for p in tn.problems(_spec(model_type="transformer"), tn.Host("trn2", "", 2, ""))} == set()
    unset = tn.problems(_spec(lnc=1, model_type="transformer"), tn.Host("trn2", "x", None, "unset"))
    assert [p.field for p in unset] == ["compiler.lnc"] and "which is unset" in unset[0].message


def test_a_spec_field_torchneuron_overrides_is_flagged_and_split_flags_are_errors():
    problems = tn.problems(
        _spec(model_type="generic", extra_args=("--internal-hlo2tensorizer-options=--a --b",)),
        tn.Host("trn2", "", 2, ""),
    )
    model = next(p for p in problems if p.field == "compiler.model_type")
    assert (
        "always passes --model-type transformer" in model.message and "this compile uses transformer" in model.message
    )
    split = next(p for p in problems if p.field == "compiler.extra_args")
    assert split.severity == "error" and "splits NEURON_CC_FLAGS at whitespace" in split.message
    # The spec's own --auto-cast comes after TorchNeuron's, and neuronx-cc takes the right-most: nothing to flag.
    assert not any(
        p.field == "compiler.auto_cast" for p in tn.problems(_spec(auto_cast="all"), tn.Host("trn2", "", 2, ""))
    )


def test_the_host_is_read_from_the_environment():
    host = tn.host({tn.TARGET_ENV: "trn3", tn.LNC_ENV: "1"})
    assert (host.target, host.target_source, host.lnc) == ("trn3", tn.TARGET_ENV, 1)


def test_check_says_what_torchneuron_will_use(tmp_path):
    env = {**torchneuron_env(), tn.TARGET_ENV: "trn2"}
    proc = neffbench("check", "seed", "--target", "trn1", "--backend", "torchneuron", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "warning: compiler.target: the spec's target is trn1, but TorchNeuron compiles for trn2" in proc.stderr


# ---- what a job finds ----


def test_neffs_are_found_in_the_cache_and_the_debug_copies_are_not_counted(tmp_path):
    neff = tmp_path / "neff_cache" / "ab" / "cd" / ("abcd" + "0" * 60 + ".neff")
    neff.parent.mkdir(parents=True)
    neff.write_bytes(b"neff")
    copy = tmp_path / "debug" / "neff" / "proc_0" / "seed_1.neff"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"neff")
    for rel in ("debug/fx_graphs/proc_0/seed_1.fx.txt", "debug/stablehlo/proc_0/seed_1.stablehlo.mlir"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert tn.neff_files(tmp_path) == [neff]
    assert [e["path"] for e in records.neff_entries(tmp_path, "torchneuron")] == [neff.relative_to(tmp_path).as_posix()]
    assert len(records.neff_entries(tmp_path)) == 2  # another backend's job keeps every NEFF it has
    art = tn.debug_artifacts(tmp_path)
    assert art == {
        "fx_graphs": ["debug/fx_graphs/proc_0/seed_1.fx.txt"],
        "stablehlo": ["debug/stablehlo/proc_0/seed_1.stablehlo.mlir"],
        "other": ["debug/neff/proc_0/seed_1.neff"],
    }


def test_the_job_tensors_are_matched_to_the_neff_inputs_by_dtype_and_shape():
    given = [("int64", (1,)), ("float32", (1, 2048)), ("float32", (1, 512)), ("float32", (128, 64))]
    neff = [
        ("input0", "int32", (1,)),
        ("input1", "float32", (128, 64)),
        ("input2", "float32", (1, 2048)),
        ("input3", "float32", (1, 512)),
    ]  # dynamo's order: first use
    assert tn.match_inputs(neff, given) == {0: "input0", 3: "input1", 1: "input2", 2: "input3"}
    assert tn.match_inputs(neff[:3], [given[0], None, given[2], given[3]]) is None  # input2 has no tensor
    same = [("float32", (4, 8)), ("float32", (4, 8))]
    assert tn.match_inputs([("a", "float32", (4, 8)), ("b", "float32", (4, 8))], same) == {0: "a", 1: "b"}


# ---- why it failed ----

STABLEHLO = (
    "BackendCompilerFailed: backend='neuron' raised:\nRuntimeError: Neuron backend NEFF execution setup "
    "failed with unexpected error: StableHLO to NEFF compilation failed for torch.compile: Command failed "
    "(neuronx-cc compilation) with exit code 70: [ERROR] [NCC_EVRF001] Operator sort is not supported\n"
)


def test_a_compiler_failure_gives_its_exit_code_and_first_error():
    assert compile_failure(STABLEHLO) == (
        "neuronx-cc exited with code 70 under TorchNeuron (an internal compiler step failed (EX_SOFTWARE; the Neuron "
        "SDK reports it from the HLO verifier): look for unsupported operations in the model): [NCC_EVRF001] "
        "Operator sort is not supported"
    )
    log = ["2026-01-01T00:00:00Z USER 7 [root/WalrusDriver]: [NLA001] Unhandled exception with message: boom"]
    text = STABLEHLO.replace("70: [ERROR] [NCC_EVRF001] Operator sort is not supported", "1")
    assert compile_failure(text, log).endswith(
        "(the compiler reported an error): [NLA001] Unhandled exception with message: boom"
    )
    assert exit_status_in("Command failed (neuronx-cc compilation) with exit code 70: x") == 70


def test_a_killed_compiler_and_a_missing_device_are_one_sentence_each():
    assert "a compiler killed by a signal, most often the out-of-memory killer" in compile_failure(
        "RuntimeError: StableHLO to NEFF compilation failed for torch.compile: Failed to read compiled NEFF file: "
        "/tmp/neuron_compile_x/module.neff"
    )
    assert compile_failure("RuntimeError: No Neuron devices available", version="2.13.3.0") == (
        "TorchNeuron (torch-neuronx 2.13.3.0) compiles only on a Trn2 or Trn3 instance, and this host has no Neuron "
        "device: run the compile there (for Inf2/Trn1, the legacy neuron backend of torch-neuronx 2.9 and earlier "
        "compiles without a device)"
    )
    assert compile_failure("RuntimeError: something else") is None


def test_a_graph_break_names_the_users_line_not_the_wrapper(tmp_path):
    text = (
        "Data-dependent branching\n  Explanation: Detected data-dependent branching\n\nfrom user code:\n"
        '   File "<NeffbenchWrapper>", line 9, in forward\n'
        f'  File "{tmp_path}/model.py", line 11, in forward\n'
        "    if y.sum() > 0:  # why\n       ^^^^^^\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n"
    )
    assert graph_break(text) == (
        f"graph break under fullgraph=True at {tmp_path}/model.py:11 in forward "
        "(`if y.sum() > 0:`): Data-dependent branching; TorchNeuron compiles the module as "
        "one graph, so that line must change (torch's explanation and hints are in job.log)"
    )


def test_torchneuron_log_lines_are_records():
    rec = parse_line("[Neuron] [ERROR] [torch_neuronx/csrc/core/KernelExecution.cpp:88] Execution failed: x")
    assert (rec.kind, rec.level, rec.logger, rec.message) == (
        "torchneuron",
        "ERROR",
        "torch_neuronx/csrc/core/KernelExecution.cpp:88",
        "Execution failed: x",
    )
    assert parse_line("[Neuron] [INFO] [NEFF_CACHE] Cache MISS for key: ab ").level == "INFO"


# ---- reproduce.py ----


def test_reproduce_script_sets_the_same_variables_and_compiles_with_torch_compile():
    import ast

    from neffbench.jobs import reproduce

    text = reproduce.render(SEED, job_id="job-1", backend="torchneuron", built=kernels.for_spec(SEED).build(SEED))
    tree = ast.parse(text)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "neffbench" not in imported and "torch" in imported
    for name in (
        "TORCH_NEURONX_NEFF_CACHE_DIR",
        "TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION",
        "NEURON_CC_FLAGS",
        "NEURON_COMPILER_OPT_LEVEL",
        "TORCH_NEURONX_LOG_FILE",
    ):
        assert f"'{name}'" in text, name
    assert 'torch.compile(module.to(DEVICE), backend="neuron", fullgraph=True, dynamic=False' in text
    assert text.index("os.environ.update") < text.index("\nimport torch")
    assert "--model-type transformer --auto-cast=none --verbose info --auto-cast none" in text


# ---- doctor and the window ----


def test_doctor_reports_the_fake_torchneuron(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "neffbench", "doctor", "--json"],
        cwd=REPO,
        env={**os.environ, **torchneuron_env()},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["torch_neuronx_flavour"] == "native" and data["backend"] == "torchneuron"
    assert data["torch_neuronx"]["version"] == "2.13.3.0+fake"
    assert "TorchNeuron, the native flavour" in data["torch_neuronx"]["detail"]
    assert any("Trn2/Trn3 instance only" in a for a in data["advice"])


def test_the_status_bar_names_the_flavour_and_the_backend(qtbot):
    from neffbench.gui.shell.toolchain_status import DoctorStatus

    status = DoctorStatus()
    qtbot.addWidget(status)
    status.show_facts(_facts("2.13.3.0", "native", ("/dev/neuron0",)))
    assert status.toolchain.text() == "● Neuron toolchain: TorchNeuron 2.13.3.0, neuronx-cc 2.23.0"
    assert status.backend_label.text() == "● Compiles: torchneuron (torch.compile)"
    assert status.backend_label.toolTip().startswith(
        'Compiles with torchneuron, torch.compile(backend="neuron") (TorchNeuron, SDK 2.33+), because torch_neuronx '
        "2.13.3.0 imports and neuronx-cc is on PATH; it is TorchNeuron (version 2.13.3 or later)."
    )
    status.show_facts(_facts("2.13.3.0", "native"))
    assert status.backend_label.text() == "● Compiles: torchneuron, needs a Trn2/Trn3 device"
    status.show_facts(_facts("2.9.0.2.15", "legacy", ("/dev/neuron0",)))
    assert status.toolchain.text() == "● Neuron toolchain: torch_neuronx 2.9.0.2.15 (legacy), neuronx-cc 2.23.0"
    assert status.backend_label.text() == "● Compiles: neuron (trace, legacy)"
    assert "torch_neuronx.trace (legacy, SDK ≤ 2.31)" in status.backend_label.toolTip()
