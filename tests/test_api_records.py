"""The Python API's records: the CLI's --json is made from them, they show themselves in Jupyter, and the tabular
ones become DataFrames when pandas is there."""

from __future__ import annotations

import json
import sys

import pytest

import neffbench
from neffbench.api.compare import Compare
from neffbench.api.explanation import Explanation
from neffbench.api.job import Job
from neffbench.api.sweeping import Sweep
from neffbench.presets import load_preset
from tests.cli import neffbench as run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A seed job (cpu-check), run on the CPU, and a sweep of two points, made by the command line."""
    folder = tmp_path_factory.mktemp("records")
    assert run_cli("compile", "seed", "--backend", "cpu-check", "--workdir", str(folder)).returncode == 0
    sweep = run_cli(
        "sweep", "seed", "--over", "compiler.optlevel=1,3", "--backend", "cpu-check", "--workdir", str(folder)
    )
    assert sweep.returncode == 0, sweep.stderr
    return folder


def _job(workdir) -> Job:
    return next(j for j in neffbench.jobs(workdir) if not j.cached and j.view.spec["compiler"]["optlevel"] == 2)


def test_the_commands_json_is_the_records_to_json(workdir):
    job = _job(workdir)
    explained = run_cli("explain", str(job.directory), "--json")
    assert json.loads(explained.stdout) == json.loads(json.dumps(Explanation.of(job.directory).to_json(), default=str))
    text = run_cli("explain", str(job.directory))
    assert text.stdout.splitlines() == Explanation.of(job.directory).lines()
    (sweep_id,) = [p.name for p in (workdir / "sweeps").iterdir()]
    shown = run_cli("sweep", "show", sweep_id, "--workdir", str(workdir), "--json")
    assert json.loads(shown.stdout) == json.loads(json.dumps(Sweep.load(workdir, sweep_id).to_json(), default=str))
    before = set((job.directory / "runs").glob("*.json"))  # other tests of this module run the same job
    ran = run_cli("run", str(job.directory), "--runtime", "cpu", "--iterations", "5", "--json")
    (run,) = set((job.directory / "runs").glob("*.json")) - before
    assert json.loads(ran.stdout) == json.loads(run.read_text())


def test_a_job_shows_its_outcome_interface_and_numerics(workdir):
    job = _job(workdir)
    page = job._repr_html_()
    assert "succeeded" in page and "input0" in page and "numerics on CPU" in page
    assert repr(job).startswith(f"<Job {job.job_id}: succeeded (cpu-check")
    listed = neffbench.jobs(workdir)
    assert "<table" in listed._repr_html_() and len(listed) == 3


def test_a_jobs_structure_is_what_the_structure_command_prints(workdir):
    job = _job(workdir)
    structure = job.structure()
    printed = run_cli("structure", str(job.directory), "--json")
    assert json.loads(printed.stdout) == json.loads(json.dumps(structure.to_json(), default=str))
    assert run_cli("structure", str(job.directory)).stdout.splitlines() == str(structure).splitlines()
    assert structure.to_json()["nodes"][0]["class"] in structure._repr_html_()
    assert list(structure.to_pandas().columns)[:2] == ["path", "class"]
    assert isinstance(structure, neffbench.Structure)


def test_a_run_shows_its_percentiles_and_a_histogram(workdir):
    run = _job(workdir).run(runtime="cpu", iterations=20)
    assert run.succeeded and not run.on_device
    page = run._repr_html_()
    assert "<svg" in page and "p99" in page and "not a device figure" in page
    frame = run.to_pandas()
    assert list(frame.columns) == ["iteration", "ms"] and len(frame) == 20


def test_a_compare_draws_its_taps_and_a_sweep_its_table(workdir):
    (sweep_id,) = [p.name for p in (workdir / "sweeps").iterdir()]
    sweep = Sweep.load(workdir, sweep_id)
    assert sweep.state == "succeeded" and "optlevel" in sweep._repr_html_()
    assert len(sweep.to_pandas()) == 2
    document = {
        "job": "j",
        "verdict": "divergent",
        "summary": ["first divergent against float64: `layers.2`"],
        "taps": [
            {"name": "tap0", "module": "layers.0", "vs_eager": {"ok": True, "times_tolerance": 0.5}},
            {"name": "tap1", "module": "layers.2", "vs_eager": {"ok": False, "times_tolerance": 70.2}},
        ],
    }
    compared = Compare(document, ("a line",), workdir / "compares" / "c.json")
    page = compared._repr_html_()
    assert page.count("<rect") == 2 and "#c62828" in page and "layers.2" in page
    assert compared.to_pandas()["vs_eager.times_tolerance"].tolist() == [0.5, 70.2]


def test_to_pandas_without_pandas_says_how_to_get_it(workdir, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        neffbench.jobs(workdir).to_pandas()


def test_compile_from_python_returns_the_jobs_the_command_would_make(tmp_path, capsys):
    spec = load_preset("seed")
    jobs = neffbench.compile(spec, backend="cpu-check", workdir=tmp_path)
    (job,) = jobs
    assert job.succeeded and job.directory.parent == tmp_path.resolve()
    assert "numerics on CPU" in capsys.readouterr().out
    again = neffbench.compile("seed", backend="cpu-check", workdir=tmp_path)
    assert again[0].cached


def test_a_neff_shows_its_header_and_interface(tmp_path):
    from tests.neff_factory import build_neff

    build_neff(tmp_path / "a" / "graph.neff", inputs={"x": ("float32", (2, 3))}, outputs={"y": ("float16", (2,))})
    (neff,) = neffbench.neffs(tmp_path)
    page = neff._repr_html_()
    assert "NEFF a/graph.neff" in page and "cayman" in page and "none found" in page
    assert "<table" in page and "float16" in page and "[2, 3]" in page
    assert "<table" in neffbench.neffs(tmp_path)._repr_html_()
