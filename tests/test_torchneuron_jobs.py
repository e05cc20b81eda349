"""The torchneuron backend against the fake TorchNeuron and neuronx-cc: each case a real worker process.

The seed goes through the CLI (a standby worker, started before the job exists, as in every
`neffbench compile`); the other jobs through CompileJob. They start one after another, each with its
own fake environment, then run side by side.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from neffbench.jobs import CompileJob
from neffbench.presets import load_preset
from neffbench.spec import load
from tests.cli import neffbench
from tests.explain_agreement import check_jobs_below
from tests.fakes import fake_env, runtime_controls, torchneuron_env

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "modules"
SEED = load_preset("seed")
_NORM = load_preset("llama3-8b-rms-norm-residual")
RMS_NORM = dataclasses.replace(
    _NORM,
    norm=dataclasses.replace(_NORM.norm, hidden_size=256),
    inputs=dataclasses.replace(_NORM.inputs, num_tokens=(4,)),
)
MODULE_TOML = """
name = "{name}"
kernel = "module"

[module]
entry = "{entry}"

[inputs]
x = "f32[4,{width}]{init}"
"""
# name: (spec, backend, environment)
CASES = {
    "rms_norm": (RMS_NORM, "torchneuron", torchneuron_env()),
    "module": ("mlp.py:make_mlp", "auto", torchneuron_env()),
    "compile-error": (SEED, "auto", torchneuron_env(compiler="compile-error")),
    "unsupported-op": (SEED, "torchneuron", torchneuron_env(compiler="unsupported-op")),
    "killed-compiler": (SEED, "torchneuron", torchneuron_env(compiler="oom")),
    "no-device": (SEED, "torchneuron", torchneuron_env("no-device")),
    # Inputs of one sign: the CPU trace holds for other values of them too, so only dynamo's graph break stops it.
    "graph-break": ("graph_break.py:DataDependentBranch ones", "torchneuron", torchneuron_env()),
    "baked-branch": ("graph_break.py:DataDependentBranch", "torchneuron", torchneuron_env()),
    "trace-on-torchneuron": (SEED, "neuron", torchneuron_env()),
    "torchneuron-on-trace": (SEED, "torchneuron", fake_env()),
}


_cli = neffbench


def _module_spec(root: Path, case: str):
    """``file.py:Name [init]``: a module spec of that entry, its input made with that init (randn by default)."""
    entry, _, init = case.partition(" ")
    name = entry.split(":")[1].lower().replace("_", "-")
    path = root / f"{name}{'-' + init if init else ''}.toml"
    width = 64 if "mlp" in entry else 8
    path.write_text(MODULE_TOML.format(name=name, entry=DATA / entry, width=width, init=f" {init}" if init else ""))
    return load(path)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> dict[str, dict]:
    """Every case's final job.json (with ``_dir`` and ``_log`` added); the seed's CLI run under ``seed``."""
    root = tmp_path_factory.mktemp("torchneuron")
    seed = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neffbench",
            "compile",
            "seed",
            "--workdir",
            str(root / "seed"),
            "--backend",
            "torchneuron",
            "--json",
        ],
        cwd=REPO,
        env={**os.environ, **torchneuron_env()},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    runners = {}
    for name, (spec, backend, env) in CASES.items():
        if isinstance(spec, str):
            spec = _module_spec(root, spec)
        with pytest.MonkeyPatch.context() as mp:
            for key, value in env.items():
                mp.setenv(key, value)
            runner = CompileJob(spec, workdir=root / name, backend=backend, use_cache=False)
            runner.start()  # the worker takes this environment with it
        runners[name] = runner
    with ThreadPoolExecutor(len(runners)) as pool:
        results = dict(zip(runners, pool.map(lambda r: r.wait(), runners.values())))
    out, err = seed.communicate(timeout=300)
    assert seed.returncode == 0, out + err
    records = {name: {**r.record, "_dir": r.job_dir} for name, r in results.items()}
    (seed_record,) = json.loads(out)
    records["seed"] = {**seed_record, "_dir": next((root / "seed").glob("*/job.json")).parent}
    for rec in records.values():
        rec["_log"] = (rec["_dir"] / "job.log").read_text(encoding="utf-8")
    return records


@pytest.mark.parametrize("name", ["seed", "rms_norm", "module"])
def test_kernels_compile_and_their_neffs_are_found_and_recorded(jobs, name):
    from neffbench.neff import read_neff

    rec = jobs[name]
    assert rec["outcome"] == "succeeded", rec["reason"]
    assert rec["backend"] == "torchneuron" and rec["makes_neff"] is True
    [neff] = rec["neffs"]
    assert neff["path"].startswith("neff_cache/") and len(Path(neff["path"]).parts) == 4  # neff_cache/ab/cd/<hex>.neff
    path = rec["_dir"] / neff["path"]
    assert neff["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() and neff["size"] == path.stat().st_size
    assert Path(neff["path"]).stem[:4] == "".join(Path(neff["path"]).parts[1:3])
    assert read_neff(path).outputs
    debug = rec["torchneuron"]["debug"]
    assert len(debug["fx_graphs"]) == 1 and len(debug["stablehlo"]) == 1
    assert all((rec["_dir"] / p).is_file() for p in debug["fx_graphs"] + debug["stablehlo"])
    assert rec["model_pt"] is None and (rec["_dir"] / "reproduce.py").is_file()
    assert rec["numerics"]["checked"] and rec["numerics"]["match"] is True
    assert rec["numerics"]["device_verified"] is False  # the fake's device is the CPU, and the record says so
    assert rec["versions"]["torch_neuronx"] == "2.13.3.0+fake" and rec["versions"]["torch_neuronx_flavour"] == "native"


def test_the_job_is_isolated_and_its_logs_stream_into_job_log(jobs):
    rec, job = jobs["seed"], jobs["seed"]["_dir"]
    env = rec["compiler_command"]["env"]
    assert env["TORCH_NEURONX_NEFF_CACHE_DIR"] == str(job / "neff_cache")
    assert env["TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION"] == "1"
    # The fake reads its log file when it is imported: a standby worker must not have imported it earlier.
    tn_log = (job / "torchneuron.log").read_text(encoding="utf-8")
    assert (
        "[Neuron] [INFO] [torch_neuronx/csrc/core/compilation/PersistentCacheBackend.cpp:142] [NEFF_CACHE] "
        "Cache MISS for key:" in tn_log
    )
    for line in tn_log.splitlines():
        assert line in rec["_log"].splitlines()
    assert "Running Frontend" in rec["_log"]  # the compiler's own log, through NEURON_CC_FLAGS' --logfile
    assert [p["name"] for p in rec["compiler"]["passes"]] == [
        "Frontend",
        "WalrusDriver",
        "BIRLinker",
        "Kelper",
        "SaveTemps",
    ]
    assert list(rec["stages"]) == [
        "building",
        "weights",
        "reference",
        "tracing",
        "compiling",
        "saving",
        "structure",
        "verifying",
        "done",
    ]


def test_the_command_shows_torchneuron_flags_and_the_warnings_say_what_it_uses(jobs):
    rec = jobs["seed"]
    cmd = rec["compiler_command"]
    assert cmd["added"] == ["--model-type", "transformer", "--auto-cast=none"]
    assert cmd["requested"][cmd["requested"].index("-O2") + 1 :][:3] == cmd["added"]
    actual = cmd["actual"]  # the compiler logs the command TorchNeuron ran
    assert actual[actual.index("--model-type") : actual.index("--model-type") + 3] == cmd["added"]
    assert cmd["dropped"] == []
    warnings = " ".join(rec["warnings"])
    assert (
        "compiler.model_type: the spec's model_type is generic, but TorchNeuron always passes --model-type "
        "transformer" in warnings
    )
    assert "compiler.target: TorchNeuron compiles for this instance's target" in warnings


def test_inputs_are_keyed_by_the_neffs_own_names(jobs):
    from neffbench.neff import read_neff
    from neffbench.runs import arrays

    rec = jobs["seed"]
    neff = read_neff(rec["_dir"] / rec["neffs"][0]["path"])
    saved = arrays.load(rec["_dir"] / "inputs.npz")
    assert list(saved.roles.values()) == ["positions", "query", "key", "cos_sin_cache"]  # the call's order
    for t in neff.inputs:
        assert list(saved.shape(t.name)) == list(t.shape)


def test_a_compiler_failure_gives_the_exit_code_and_the_compilers_first_error(jobs):
    rec = jobs["compile-error"]
    assert rec["outcome"] == "failed" and rec["backend"] == "torchneuron"
    assert rec["reason"] == (
        "neuronx-cc exited with code 1 under TorchNeuron (the compiler reported an error): "
        "[NLA001] Unhandled exception with message: tensor size must be more than 0, input1_set "
        "(during compiling)"
    )
    assert rec["compiler"]["exit_code"] == 1 and rec["error"]["code"] == "NLA001"
    assert rec["neffs"] == [] and rec["neff_note"] == "no NEFF was produced"
    rec = jobs["unsupported-op"]
    assert rec["reason"].startswith("neuronx-cc exited with code 70 under TorchNeuron (an internal compiler step")
    assert rec["reason"].endswith(
        ": [NCC_EVRF001] Operator sort is not supported by neuronx-cc on trn2 (during compiling)"
    )
    assert rec["compiler"]["exit_code"] == 70
    assert rec["error"]["code"] == "NCC_EVRF001" and rec["error"]["message"].startswith("[ERROR] [NCC_EVRF001]")


def test_a_compiler_killed_by_a_signal_is_explained(jobs):
    rec = jobs["killed-compiler"]
    assert rec["outcome"] == "failed"
    assert (
        rec["reason"].startswith(
            "neuronx-cc ended without writing a NEFF under TorchNeuron (Failed to read compiled NEFF file)"
        )
        and "out-of-memory killer" in rec["reason"]
    )


def test_a_host_without_a_trainium_device_gets_one_sentence(jobs):
    rec = jobs["no-device"]
    assert rec["outcome"] == "failed"
    assert rec["reason"] == (
        "TorchNeuron (torch-neuronx 2.13.3.0+fake) compiles only on a Trn2 or Trn3 instance, and "
        "this host has no Neuron device: run the compile there (for Inf2/Trn1, the legacy neuron "
        "backend of torch-neuronx 2.9 and earlier compiles without a device) (during tracing)"
    )
    assert "Cache MISS" not in rec["_log"]  # nothing was compiled


def test_a_graph_break_names_the_users_file_and_line(jobs):
    rec = jobs["graph-break"]
    assert rec["outcome"] == "failed"
    assert rec["reason"].startswith(
        f"graph break under fullgraph=True at {DATA / 'graph_break.py'}:11 in forward "
        "(`if y.sum() > 0:`): Data-dependent branching; TorchNeuron compiles the module"
    )


def test_a_branch_on_a_value_is_caught_by_the_cpu_check_before_torchneuron_compiles(jobs):
    rec = jobs["baked-branch"]
    assert rec["outcome"] == "failed"
    assert rec["reason"].startswith("pre-flight: the trace does not hold for other inputs")
    assert "the TracerWarning at graph_break.py:11 says where" in rec["reason"]
    assert "Cache MISS" not in rec["_log"]  # nothing was compiled


def test_a_backend_asked_for_by_name_needs_its_flavour(jobs):
    assert jobs["trace-on-torchneuron"]["reason"].startswith(
        "the neuron backend (torch_neuronx.trace, legacy, SDK ≤ 2.31) was requested but torch_neuronx 2.13.3.0+fake "
        "is TorchNeuron"
    )
    assert jobs["torchneuron-on-trace"]["reason"].startswith(
        "the torchneuron backend was requested but torch_neuronx 2.9.0.2.15.32035+fake is the legacy XLA flavour"
    )


def test_explain_agrees_with_every_job(jobs, neffbench_in_process):
    root = jobs["seed"]["_dir"].parent.parent
    # Every case's job, and any job another test of this module has added since (the order is shuffled).
    assert check_jobs_below(root) == len(list(root.glob("*/*/job.json"))) >= len(jobs)
    proc = neffbench_in_process("explain", str(jobs["unsupported-op"]["_dir"]), "--json")
    data = json.loads(proc.stdout)
    assert data["exit_code"] == 70 and data["first_error"]["code"] == "NCC_EVRF001"


def test_run_loads_the_neff_from_the_cache_layout(jobs, tmp_path, neffbench_in_process):
    from neffbench.runs import arrays

    job = jobs["seed"]["_dir"]
    outputs = tmp_path / "outputs.npz"
    np.savez(outputs, **arrays.load(job / "reference.npz").arrays)
    proc = _cli(
        "run",
        str(job),
        "--runtime",
        "nrtpy",
        "--iterations",
        "3",
        "--json",
        env=torchneuron_env(runtime=True, **runtime_controls(outputs=str(outputs))),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["neff"].endswith(jobs["seed"]["neffs"][0]["path"]) and rec["numerics"]["match"] is True
    cpu = json.loads(neffbench_in_process("run", str(job), "--runtime", "cpu", "--iterations", "3", "--json").stdout)
    assert cpu["numerics"]["match"] is True
    listed = neffbench_in_process("list", str(job), "--json")
    assert [n["path"] for n in json.loads(listed.stdout)] == [jobs["seed"]["neffs"][0]["path"]]


def test_reproduce_script_rebuilds_the_neff_with_torch_compile(jobs, tmp_path):
    job = jobs["seed"]["_dir"]
    proc = subprocess.run(
        [sys.executable, str(job / "reproduce.py"), str(tmp_path / "out")],
        cwd=tmp_path,
        env={**os.environ, **torchneuron_env()},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    from neffbench.neff import read_neff

    [neff] = list((tmp_path / "out" / "neff_cache").glob("*/*/*.neff"))
    original = read_neff(job / jobs["seed"]["neffs"][0]["path"])
    assert [(t.name, t.shape) for t in read_neff(neff).inputs] == [(t.name, t.shape) for t in original.inputs]
    assert "Cache MISS" in (tmp_path / "out" / "torchneuron.log").read_text()


def test_an_identical_compile_is_served_from_the_cache(jobs):
    job = jobs["rms_norm"]["_dir"]
    with pytest.MonkeyPatch.context() as mp:
        for key, value in torchneuron_env().items():
            mp.setenv(key, value)
        result = CompileJob(RMS_NORM, workdir=job.parent, backend="torchneuron").start()
    rec = json.loads((result / "job.json").read_text())
    assert rec["cache"]["hit"] is True and rec["outcome"] == "succeeded"
    assert [n["path"] for n in rec["neffs"]] == [n["path"] for n in jobs["rms_norm"]["neffs"]]
    assert rec["torchneuron"]["debug"] == jobs["rms_norm"]["torchneuron"]["debug"]
