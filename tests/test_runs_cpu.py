"""``neffbench run`` with the cpu runtime, for real, on a job of every kernel; and what a run refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import neffbench

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "modules"

JOBS = {
    "rope": ["seed", "--num-tokens", "4"],
    "rms_norm": ["llama3-8b-rms-norm-residual", "--hidden-size", "256", "--num-tokens", "8"],
    "silu_and_mul": ["llama3-8b-silu-and-mul", "--intermediate-size", "128", "--num-tokens", "8"],
    "module": [
        f"{DATA}/mlp.py:make_mlp",
        "--input",
        "x:bf16[{batch},64]",
        "--bucket",
        "batch=2",
        "--dtype",
        "bfloat16",
    ],
}


_cli = neffbench


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runjobs")
    procs = {
        k: subprocess.Popen(
            [sys.executable, "-m", "neffbench", "compile", *args, "--backend", "cpu-check", "--workdir", str(root / k)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k, args in JOBS.items()
    }
    for _name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err
    return {k: next((root / k).glob("*/job.json")).parent for k in JOBS}


@pytest.mark.parametrize("kernel", sorted(JOBS))
def test_the_cpu_runtime_runs_every_kernels_job_and_checks_it(jobs, kernel):
    job = jobs[kernel]
    assert (job / "inputs.npz").is_file() and (job / "reference.npz").is_file()
    proc = _cli("run", str(job), "--runtime", "cpu", "--iterations", "25", "--warmup", "2", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["outcome"] == "succeeded" and record["runtime"] == "cpu"
    assert record["label"] == "CPU" and record["on_device"] is False and record["mode"] == "host"
    assert record["numerics"]["checked"] and record["numerics"]["match"]
    assert len(record["durations_ms"]) == 25 and record["stats"]["iterations"] == 25
    assert record["stats"]["p50_ms"] > 0 and record["cold_ms"] > 0
    assert record["variant"] == "TorchScript (model.pt)" and record["secondary"]["variant"] == "eager module"
    assert record["items_per_call"] == {"rope": 4, "rms_norm": 8, "silu_and_mul": 8, "module": 2}[kernel]
    # The newest CPU record (UTC times in the names): other tests of this module run the same jobs too.
    saved = json.loads(Path(record["path"] if "path" in record else max((job / "runs").glob("*-cpu.json"))).read_text())
    assert saved["durations_ms"] == record["durations_ms"]


def test_runs_never_overwrite_one_another_and_the_summary_says_cpu(jobs):
    job = jobs["rope"]
    before = set((job / "runs").glob("*.json"))  # other tests of this module may have run it already
    for _ in range(2):
        proc = _cli("run", str(job), "--runtime", "cpu", "--iterations", "3")
        assert proc.returncode == 0, proc.stderr
    assert "CPU figures: the NEFF did not run; these time the job's module on this host's CPU" in proc.stdout
    assert "latency [TorchScript (model.pt)]: p50" in proc.stdout
    new = sorted(p.name for p in set((job / "runs").glob("*.json")) - before)
    assert len(new) == 2 and all(n.endswith("-cpu.json") for n in new) and before <= set((job / "runs").glob("*.json"))


def test_random_and_given_inputs(jobs, tmp_path):
    job = jobs["rms_norm"]
    random = json.loads(_cli("run", str(job), "--runtime", "cpu", "--iterations", "2", "--random", "--json").stdout)
    assert random["inputs"]["source"] == "random values"
    # reference.npz is for other values: these are compared with the job's own module run on them, on the CPU.
    assert random["outcome"] == "succeeded", random
    assert random["numerics"]["checked"] and random["numerics"]["match"]
    assert random["numerics"]["against"].startswith("the CPU reference for these inputs")
    import numpy as np

    from neffbench.runs import arrays

    feeds = arrays.load(job / "inputs.npz")
    given = tmp_path / "given.npz"
    arrays.save(given, feeds)
    again = json.loads(
        _cli("run", str(job), "--runtime", "cpu", "--iterations", "2", "--inputs", str(given), "--json").stdout
    )
    assert again["outcome"] == "succeeded" and again["inputs"]["source"] == str(given)
    np.save(tmp_path / "x.npy", np.zeros((8, 256), np.float32))
    bad = _cli("run", str(job), "--inputs", "nonsense")
    assert bad.returncode == 1  # a missing archive is a failed run with its sentence
    assert "does not exist" in bad.stdout


def test_what_a_run_refuses(jobs, tmp_path, sample_neff):
    none = _cli("run", str(tmp_path))
    assert none.returncode == 2 and f"{tmp_path} has no job.json: it is not a job directory." in none.stderr
    bare = _cli("run", str(sample_neff), "--runtime", "cpu", cwd=tmp_path)
    assert bare.returncode == 1
    assert "the cpu runtime cannot run here: a NEFF without its job has no module to run on the CPU." in bare.stdout
    # The shared sample's folder receives nothing: bare runs of a read-only folder go under the current one.
    assert not list(sample_neff.parent.glob("*.runs"))
    assert list((tmp_path / "neffbench-runs").glob("*/*.json"))
    nrtpy = _cli("run", str(jobs["rope"]), "--runtime", "nrtpy")
    assert nrtpy.returncode == 1 and "the nrtpy runtime cannot run here: nrtpy does not import" in nrtpy.stdout
    mode = _cli("run", str(jobs["rope"]), "--runtime", "cpu", "--mode", "device")
    assert mode.returncode == 1 and "the cpu runtime times in host mode only; got --mode device." in mode.stdout
