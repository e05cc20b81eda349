"""Two builds of one spec make one module: weights are seeded from the spec, their digest is recorded, and every
later rebuild (a CPU run, reproduce.py, a sweep point elsewhere) says so plainly when it made another module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neffbench.jobs import read_record
from tests.cli import neffbench
from tests.fakes import fake_env

RANDOM_INIT = """
import torch
from torch import nn


class Net(nn.Module):
    \"\"\"Randomly initialised, as every model built from a config is.\"\"\"

    def __init__(self, dim: int = 8):
        super().__init__()
        self.a = nn.Linear(dim, dim)
        self.b = nn.Linear(dim, dim)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
"""
# Initialised from the operating system's randomness: no seed can make two builds agree.
UNSEEDABLE = """
import os

import torch
from torch import nn


def make():
    net = nn.Linear(4, 4)
    with torch.no_grad():
        net.weight.copy_(torch.frombuffer(bytearray(os.urandom(16)), dtype=torch.uint8).float().reshape(4, 4))
    return net
"""


_cli = neffbench


def _job(workdir: Path) -> Path:
    return max((p.parent for p in workdir.glob("*/job.json")), key=lambda d: read_record(d)["created"])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cpu-check", "neuron"])
def test_a_randomly_initialised_module_runs_on_the_cpu_as_it_was_compiled(tmp_path, backend):
    (tmp_path / "net.py").write_text(RANDOM_INIT)
    env = fake_env("success") if backend == "neuron" else {}
    extra = ("--target", "trn2") if backend == "neuron" else ()
    proc = _cli(
        "compile",
        "net.py:Net",
        "--input",
        "x:f32[3,8]",
        "--workdir",
        "wd",
        "--backend",
        backend,
        "--no-cache",
        *extra,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    job = _job(tmp_path / "wd")
    record = read_record(job)
    assert record["weights"]["tensors"] == 4 and record["weights"]["method"] == "every byte"
    ran = _cli("run", str(job), "--runtime", "cpu", "--iterations", "3", "--json", cwd=tmp_path, env=env)
    run = json.loads(ran.stdout)
    assert run["outcome"] == "succeeded", run.get("reason")
    assert run["numerics"]["match"], run["numerics"]
    # A second compile (no cache) builds the very same module.
    again = _cli(
        "compile",
        "net.py:Net",
        "--input",
        "x:f32[3,8]",
        "--workdir",
        "wd",
        "--backend",
        backend,
        "--no-cache",
        *extra,
        cwd=tmp_path,
        env=env,
    )
    assert again.returncode == 0
    assert read_record(_job(tmp_path / "wd"))["weights"]["sha256"] == record["weights"]["sha256"]


def test_the_weights_seed_is_part_of_the_spec_hash_and_the_inputs_seed_is_not(tmp_path):
    import dataclasses

    from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
    from neffbench.spec import spec_hash

    (tmp_path / "net.py").write_text(RANDOM_INIT)
    spec = ModuleCompileSpec(module=ModuleSection(entry=f"{tmp_path / 'net.py'}:Net"), inputs={"x": "f32[3,8]"})
    assert spec_hash(dataclasses.replace(spec, seed=7)) == spec_hash(spec)
    other = dataclasses.replace(spec, module=dataclasses.replace(spec.module, weights_seed=1))
    assert spec_hash(other) != spec_hash(spec)


def test_builds_of_one_spec_make_one_module_and_another_seed_another(tmp_path):
    import dataclasses

    from neffbench.backends.weights import weights_digest
    from neffbench.kernels.module.build import build
    from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection

    (tmp_path / "net.py").write_text(RANDOM_INIT)
    spec = ModuleCompileSpec(module=ModuleSection(entry=f"{tmp_path / 'net.py'}:Net"), inputs={"x": "f32[3,8]"})
    first, second = weights_digest(build(spec).module), weights_digest(build(spec).module)
    assert first == second
    reseeded = dataclasses.replace(spec, module=dataclasses.replace(spec.module, weights_seed=3))
    assert weights_digest(build(reseeded).module)["sha256"] != first["sha256"]


@pytest.mark.slow
def test_a_rebuild_that_makes_another_module_is_said_so_not_reported_as_a_mismatch(tmp_path):
    (tmp_path / "noisy.py").write_text(UNSEEDABLE)
    env = fake_env("success")
    proc = _cli(
        "compile",
        "noisy.py:make",
        "--input",
        "input:f32[2,4]",
        "--workdir",
        "wd",
        "--backend",
        "neuron",
        "--target",
        "trn2",
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    job = _job(tmp_path / "wd")
    run = json.loads(
        _cli("run", str(job), "--runtime", "cpu", "--iterations", "2", "--json", cwd=tmp_path, env=env).stdout
    )
    assert run["outcome"] == "failed"
    assert "the module built now differs from the one compiled: its weights digest" in run["reason"]
    assert "MISMATCH" not in json.dumps(run)
    script = subprocess.run(
        [sys.executable, "reproduce.py", str(tmp_path / "out")],
        cwd=job,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )
    assert script.returncode == 3, script.stdout + script.stderr
    assert "the module built now differs from the one compiled: its weights digest" in script.stderr
    anyway = subprocess.run(
        [sys.executable, "reproduce.py", str(tmp_path / "out"), "--anyway"],
        cwd=job,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )
    assert anyway.returncode == 0, anyway.stdout + anyway.stderr


@pytest.mark.slow
def test_other_inputs_are_compared_with_the_job_module_run_on_them(tmp_path):
    """--random (and inputs of other values) against a CPU reference for those very inputs; a NEFF alone with
    random inputs says it compared nothing, and why."""
    (tmp_path / "net.py").write_text(RANDOM_INIT)
    env = fake_env("success", runtime=True)
    proc = _cli(
        "compile",
        "net.py:Net",
        "--input",
        "x:f32[3,8]",
        "--workdir",
        "wd",
        "--backend",
        "neuron",
        "--target",
        "trn2",
        "--lnc",
        "2",
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    job = _job(tmp_path / "wd")
    cpu = json.loads(
        _cli(
            "run",
            str(job),
            "--runtime",
            "cpu",
            "--random",
            "--seed",
            "5",
            "--iterations",
            "2",
            "--json",
            cwd=tmp_path,
            env=env,
        ).stdout
    )
    assert cpu["outcome"] == "succeeded" and cpu["numerics"]["match"], cpu
    assert cpu["numerics"]["against"].startswith("the CPU reference for these inputs")
    import shutil

    neff = tmp_path / "alone" / "graph.neff"  # a NEFF without its job: nothing to compute a reference with
    neff.parent.mkdir()
    shutil.copy(job / read_record(job)["neffs"][0]["path"], neff)
    alone = json.loads(
        _cli(
            "run", str(neff), "--runtime", "nrtpy", "--random", "--iterations", "2", "--json", cwd=tmp_path, env=env
        ).stdout
    )
    assert alone["numerics"]["checked"] is False, alone
    assert "no job whose module could give their reference" in alone["numerics"]["reason"], alone


def test_a_sweep_says_when_a_point_built_another_module_than_its_twin(tmp_path):
    """Points with one [module] section and closure must have one weights digest, wherever they ran."""
    from neffbench.sweeps.tracker import Tracker

    class Record:
        sweep_id = "s"

        def update_point(self, index, **changes):
            return {"state": changes.get("state"), "label": str(index)}

        def point(self, index):
            return {}

    notes: list[str] = []
    tracker = Tracker(Record(), lambda index, text: notes.append(text), None)
    for index, sha, host in ((0, "a" * 64, "node-a"), (1, "a" * 64, "node-b"), (2, "b" * 64, "node-c")):
        job = tmp_path / f"job{index}"
        job.mkdir()
        (job / "job.json").write_text(
            json.dumps({"weights": {"sha256": sha, "tensors": 4, "bytes": 64}, "sources": {"key": "k"}, "host": host})
        )
        tracker.finished(index, "succeeded", None, job_dir=job, node=host)
    warnings = [n for n in notes if "warning" in n]
    assert len(warnings) == 1
    assert "point 3 (on node-c) built a module that differs from point 1's (on node-a)" in warnings[0]
    assert "its weights digest is bbbbbbbbbbbb" in warnings[0]


def test_reproduce_checks_its_own_build(tmp_path):
    """The script carries the job's digest and the same digest function, and stops on a difference."""
    from neffbench.backends.weights_source import script_source

    text = script_source({"sha256": "0" * 64, "tensors": 1, "bytes": 4})
    namespace: dict = {"sys": sys, "ANYWAY": False}
    exec(compile(textwrap.dedent(text), "<reproduce>", "exec"), namespace)  # noqa: S102 - our own script text
    import torch

    assert namespace["same_weights"](torch.nn.Linear(1, 1)) is False
    digest = namespace["weights_digest"](torch.nn.Linear(1, 1))
    namespace["RECORDED_WEIGHTS"] = digest
    torch.manual_seed(0)
    module = torch.nn.Linear(1, 1)
    namespace["RECORDED_WEIGHTS"] = namespace["weights_digest"](module)
    assert namespace["same_weights"](module) is True
