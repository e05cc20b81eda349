"""examples/: the seed's script with its one import changed, and the same flow as a notebook, run as a user runs
them, on a host without the toolchain and with the fake one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import fake_env

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HOSTS = {
    "cpu-only": {"PATH": "/usr/bin:/bin"},
    "legacy toolchain": fake_env(),
}


def _env(host: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": "", **HOSTS[host]}


def test_the_seed_script_changes_one_import():
    script = (EXAMPLES / "seed.py").read_text(encoding="utf-8")
    assert "import neffbench as torch_neuronx\n" in script and "\nimport torch_neuronx\n" not in script
    assert 'torch_neuronx.trace(wrapper, (positions, q, k, cache), compiler_args="--lnc=2", compiler_workdir=' in script


@pytest.mark.parametrize("host", HOSTS)
def test_the_seed_script_runs_unchanged(tmp_path, host):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "seed.py")],
        cwd=tmp_path,
        env=_env(host),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "traced: query (1, 2048), key (1, 512)" in done.stdout
    assert "max abs difference against eager: 0" in done.stdout
    if host == "cpu-only":
        assert "trace runs the cpu-check backend" in done.stdout and "NEFF: none" in done.stdout
    else:
        assert re.search(r"NEFF: compiler_workdir/rope-wrapper-\S+/compiler/graph\.neff", done.stdout)
        assert "Compiler status PASS" in done.stdout


def _outputs(cell) -> tuple[str, str]:
    """A cell's printed text and its rich (HTML) result."""
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    rich = "".join(o.data.get("text/html", "") for o in cell.outputs if "data" in o)
    return text, rich


@pytest.mark.parametrize("host", HOSTS)
def test_the_seed_notebook_runs_and_shows_each_record(tmp_path, host, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    for key, value in _env(host).items():
        monkeypatch.setenv(key, value)  # the kernel inherits this environment
    notebook = nbformat.read(EXAMPLES / "seed.ipynb", as_version=4)
    nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = {c.source.split("\n")[-1]: c for c in notebook.cells if c.cell_type == "code"}
    traced, _ = _outputs(code['print(f"traced: query {tuple(q_out.shape)}, key {tuple(k_out.shape)}")'])
    assert "traced: query (1, 2048), key (1, 512)" in traced
    assert ("cpu-check backend" in traced) == (host == "cpu-only")
    _, jobs = _outputs(code["jobs"])
    assert "<table" in jobs and "rope-wrapper-" in jobs
    _, job = _outputs(code["job"])
    assert "succeeded" in job and "input0" in job and ("graph.neff" in job) == (host != "cpu-only")
    _, run = _outputs(code["run"])
    assert "<svg" in run and "p50" in run and "not a device figure" in run
    _, comparison = _outputs(code["comparison"])
    verdict = "within tolerance" if host == "cpu-only" else "could not compare"  # no NeuronCore to run the NEFF
    assert "compare of rope-wrapper-" in comparison and verdict in comparison
    _, explanation = _outputs(code["explanation"])
    assert "without-key-" in explanation and "is None" in explanation
