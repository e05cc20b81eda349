"""Paths mean one thing: what was typed relative to a folder (the command line's SPEC, --path, --input files) is
resolved once against that folder and recorded absolute, so check, compile and every later run read the same
files, whichever folder the command was typed in; the cache key stays placeless."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neffbench.jobs import read_record
from neffbench.spec import load
from tests.cli import neffbench

pytestmark = pytest.mark.slow

# A file entry that imports a module found only through the import path, as gpt-fast's `from model import ...`.
ENTRY = """
from model import Doubler


def make():
    return Doubler()
"""
MODEL = """
import torch


class Doubler(torch.nn.Module):
    def forward(self, x):
        return x * 2
"""
# A module whose package (with its distribution metadata) is reachable only through [module] path.
USES_PACKAGE = """
import torch
import pathonly


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return pathonly.double(self.lin(x))
"""


def _project(root: Path) -> Path:
    (root / "repos" / "lib").mkdir(parents=True)
    (root / "repos" / "lib" / "model.py").write_text(MODEL)
    (root / "mod.py").write_text(ENTRY)
    return root


def _jobs(workdir: Path) -> list[Path]:
    return sorted((p.parent for p in workdir.glob("*/job.json")), key=lambda d: read_record(d)["created"])


def test_check_and_compile_typed_in_another_folder_read_the_same_files(tmp_path):
    project = _project(tmp_path / "project")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    typed = ("../project/mod.py:make", "--path", "../project/repos/lib", "--input", "x:f32[4]")
    checked = neffbench("check", *typed, "--workdir", "wd", cwd=elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    compiled = neffbench("compile", *typed, "--workdir", "wd", "--backend", "cpu-check", "--json", cwd=elsewhere)
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr[-3000:]
    (job,) = _jobs(elsewhere / "wd")
    spec = load(job / "spec.toml")
    assert spec.module.entry == f"{project.resolve() / 'mod.py'}:make"
    assert spec.module.path == (str(project.resolve() / "repos" / "lib"),)
    assert read_record(job)["spec"]["module"]["path"] == [str(project.resolve() / "repos" / "lib")]
    # Typed in the project itself, the same spec: the spec hash (and the cache key) does not name a place.
    again = neffbench(
        "compile", "mod.py:make", "--path", "repos/lib", "--input", "x:f32[4]", "--workdir", str(elsewhere / "wd"),
        "--backend", "cpu-check", "--json", cwd=project,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    first, second = _jobs(elsewhere / "wd")
    assert read_record(first)["spec_hash"] == read_record(second)["spec_hash"]
    assert read_record(second)["cache"]["hit"] is True


def test_other_inputs_rebuild_the_module_with_the_jobs_import_path(tmp_path):
    project = tmp_path / "project"
    # The project's own virtualenv, named in [module] path: not this interpreter's site-packages.
    deps = project / "venv" / "site-packages"
    package = deps / "pathonly"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def double(x):\n    return x * 2\n")
    info = deps / "pathonly-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pathonly\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("pathonly\n")
    (project / "net.py").write_text(USES_PACKAGE)
    (project / "net.toml").write_text(
        'name = "net"\nkernel = "module"\n[module]\nentry = "net.py:Net"\npath = ["venv/site-packages"]\n[inputs]\nx = "f32[2,4]"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    compiled = neffbench("compile", "../project/net.toml", "--workdir", "wd", "--backend", "cpu-check", cwd=elsewhere)
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr[-3000:]
    (job,) = _jobs(elsewhere / "wd")
    sources = read_record(job)["sources"]
    assert sources["distributions"] == {"pathonly": "1.0"}
    assert sources["import_path"] == [str(deps.resolve())]
    import numpy as np

    np.save(tmp_path / "ones.npy", np.ones((2, 4), dtype=np.float32))
    for given in (["--random"], ["--inputs", f"input0={tmp_path / 'ones.npy'}"]):
        ran = neffbench("run", str(job), "--runtime", "cpu", *given, "--iterations", "2", "--json", cwd=tmp_path)
        run = json.loads(ran.stdout)
        assert run["outcome"] == "succeeded", run.get("reason")
        assert run["numerics"]["checked"] and run["numerics"]["match"], run["numerics"]
    # The recorded closure is current as it is: the next compile needs no probe to find it again.
    again = neffbench("compile", "../project/net.toml", "--workdir", "wd", "--backend", "cpu-check", cwd=elsewhere)
    assert "found by a probe" not in again.stdout + again.stderr, again.stdout + again.stderr
