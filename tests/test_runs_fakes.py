"""``neffbench run`` through the fake runtimes (nrtpy, spike, TorchScript, neuron-ls, neuron-explorer): the fakes
return what a test tells them to, so these check the plumbing, the IO checks, the explanations and that a wrong
output is caught."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from neffbench.runs import arrays
from tests.cli import neffbench
from tests.fakes import fake_env, runtime_env

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


_cli = neffbench


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """A seed job compiled with the fake toolchain: it has a NEFF, inputs.npz and reference.npz."""
    root = tmp_path_factory.mktemp("fakejob")
    proc = _cli(
        "compile", "seed", "--num-tokens", "4", "--workdir", str(root), "--backend", "neuron", env=fake_env("success")
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return next(root.glob("*/job.json")).parent


@pytest.fixture(scope="module")
def reference_outputs(job, tmp_path_factory) -> Path:
    """What a correct NEFF returns: the reference, as the fake runtime is told to give back."""
    ref = arrays.load(job / "reference.npz")
    path = tmp_path_factory.mktemp("outs") / "outputs.npz"
    np.savez(path, **ref.arrays)
    return path


def _run(job: Path, *args: str, **controls) -> tuple[subprocess.CompletedProcess, dict]:
    proc = _cli("run", str(job), "--json", *args, env=runtime_env(**controls))
    try:
        record = json.loads(proc.stdout)
    except ValueError:
        record = {}
    return proc, record


@pytest.mark.parametrize("runtime", ["nrtpy", "spike"])
def test_device_runtimes_report_the_fakes_durations_and_check_the_outputs(job, reference_outputs, runtime):
    proc, rec = _run(
        job,
        "--runtime",
        runtime,
        "--iterations",
        "6",
        "--warmup",
        "2",
        outputs=str(reference_outputs),
        durations_ms="0.5,0.7,0.6",
    )
    assert proc.returncode == 0, proc.stderr
    assert rec["runtime"] == runtime and rec["on_device"] is True and rec["mode"] == "device"
    assert rec["durations_ms"] == [0.5, 0.7, 0.6, 0.5, 0.7, 0.6]
    assert rec["stats"]["p50_ms"] == pytest.approx(0.6) and rec["stats"]["mean_ms"] == pytest.approx(0.6)
    assert rec["reported"]["mean_ms"] == pytest.approx(0.6) and rec["reported"]["warmup_iterations"] == 2
    assert rec["numerics"]["match"] is True
    assert "input input0: int64 values fed as int32" in proc.stderr
    assert rec["label"] == f"NeuronCore ({runtime})"


def test_a_wrong_output_is_caught(job):
    proc, rec = _run(job, "--runtime", "nrtpy", "--iterations", "2")  # the fake returns zeros
    assert proc.returncode == 1
    assert rec["outcome"] == "failed" and rec["reason"].startswith("outputs differ from reference.npz beyond tolerance")
    assert rec["numerics"]["match"] is False


def test_void_outputs_are_reinterpreted(job, reference_outputs):
    proc, rec = _run(job, "--runtime", "nrtpy", "--iterations", "2", outputs=str(reference_outputs), void=True)
    assert proc.returncode == 0, proc.stderr
    assert rec["numerics"]["match"] is True


def test_inputs_that_do_not_match_the_neff_run_nothing(job, tmp_path):
    wrong = arrays.Arrays()
    wrong.add("input0", np.zeros(4, np.int32))
    wrong.add("input1", np.zeros((4, 100), np.float16))
    wrong.add("input9", np.zeros(2, np.float32))
    arrays.save(tmp_path / "wrong.npz", wrong)
    proc, rec = _run(job, "--runtime", "nrtpy", "--inputs", str(tmp_path / "wrong.npz"))
    assert proc.returncode == 1
    assert rec["checks"] == [
        "'input9' is not an input of the NEFF (its inputs: input0, input1, input2, input3).",
        "input input1 is float32 in the NEFF, but the array given is float16.",
        "input input1 has shape [4, 2048] in the NEFF, but the array given has [4, 100].",
        "the NEFF takes input2 (float32 [4, 512]), but no array is given for it.",
        "the NEFF takes input3 (float32 [128, 64]), but no array is given for it.",
    ]
    assert rec["reason"].startswith("5 problem(s) before loading, so nothing was run:")
    assert rec["durations_ms"] == [] and rec["stage"] == "checking"


@pytest.mark.parametrize(
    "error, code, cause",
    [
        ("LOAD:NRT_RESOURCE(4): not enough cores", 4, "another process may hold the cores"),
        ("LOAD:NRT_UNSUPPORTED_NEFF_VERSION(10)", 10, "The runtime is older than the compiler"),
        ("EXEC:NRT_EXEC_NC_BUSY(1005): core 0 busy", 1005, "Another process holds the NeuronCore"),
        ("EXEC:NRT_EXEC_COMPLETED_WITH_NUM_ERR(1003)", 1003, "NaN or Inf"),
    ],
)
def test_runtime_errors_are_explained_by_their_number(job, error, code, cause):
    proc, rec = _run(job, "--runtime", "nrtpy", error=error)
    assert proc.returncode == 1
    assert f"({code})" in rec["reason"] and cause in rec["reason"]


def test_a_crashing_runtime_is_a_failed_run(job):
    proc, rec = _run(job, "--runtime", "nrtpy", crash=True)
    assert proc.returncode == 1
    assert rec["outcome"] == "failed"
    assert rec["reason"].startswith("the run child died with -11 (")


def test_lnc_and_busy_cores_are_checked_against_neuron_ls(job):
    proc, rec = _run(job, "--runtime", "nrtpy", neuron_ls="busy", extra={"NEURON_LOGICAL_NC_CONFIG": "1"})
    assert proc.returncode == 1
    assert any("compiled for LNC 2 but the runtime will use LNC 1" in p for p in rec["checks"]), rec["checks"]
    assert rec["host"]["holders"] and rec["host"]["holders"][0]["pid"] == 4242


def test_the_torchscript_runtime_loads_model_pt(job, reference_outputs):
    proc, rec = _run(job, "--runtime", "torchscript", "--iterations", "4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rec["runtime"] == "torchscript" and rec["mode"] == "host" and len(rec["durations_ms"]) == 4


def test_a_profile_is_captured_and_summarised(job, reference_outputs):
    proc, rec = _run(job, "--runtime", "nrtpy", "--iterations", "2", "--profile", outputs=str(reference_outputs))
    assert proc.returncode == 0, proc.stderr
    profile = rec["profile"]
    assert profile["captured"] is True and profile["ntff"].endswith(".ntff") and Path(profile["ntff"]).is_file()
    assert "--profile-nth-exec" in profile["command"]
    assert profile["summary"]["total_time"] is not None
    # Read back as the matched NEFF/NTFF pair the docs process, not a folder holding the NTFF alone.
    assert profile["open"].startswith("neuron-explorer view -n ") and " -s " in profile["open"]


def test_a_bare_neff_runs_with_random_inputs_of_its_own_signature(sample_neff, tmp_path):
    proc = _cli(
        "run",
        str(sample_neff),
        "--runtime",
        "nrtpy",
        "--random",
        "--iterations",
        "3",
        "--json",
        env=runtime_env(),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["inputs"]["arrays"] == {
        "x": {"dtype": "float16", "shape": [128, 256]},
        "y": {"dtype": "float16", "shape": [256, 128]},
    }
    assert rec["numerics"]["checked"] is False and rec["outcome"] == "succeeded"
    assert not list(sample_neff.parent.glob("*.runs"))
