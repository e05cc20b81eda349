"""``neffbench compare``: a job compared tap by tap, on the CPU runtime for real and through the fake toolchain."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from neffbench.cli.compare_cmd import EXIT_DIVERGENT, EXIT_INVALID, EXIT_NOT_COMPARED, EXIT_WITHIN
from neffbench.cli.sweep_show import EXIT_INVALID as SHOW_INVALID
from neffbench.runs import arrays
from tests.cli import neffbench
from tests.fakes import fake_env, runtime_env

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent
REPO = HERE.parent

NET = """
import torch
from torch import nn
from taps_models import Block


class Net(nn.Module):
    def __init__(self, width=8, layers=4, lossy_at=2):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(Block(width, lossy=(i == lossy_at)) for i in range(layers))
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)
"""
SPEC = """
name = "lossy"
kernel = "module"
workdir = "wd"

[module]
entry = "net.py:Net"

[inputs]
x = "f32[2,8]"
"""


_cli = partial(neffbench, timeout=600)  # a compare compiles and runs twice


def _project(compiled, tmp_path: Path, backend: str, env: dict | None = None, *args: str) -> Path:
    """The user's project (a model with a layer that does its float32 arithmetic in bfloat16) and its job: compiled
    once a session, a copy of its own in ``tmp_path`` (its job names the session's files, so what the job's compares
    cache is found by a test that compiles here: ``_compiled_here``)."""
    files = {"taps_models.py": HERE / "taps_models.py", "net.py": NET, "spec.toml": SPEC}
    compiled.project(tmp_path, files, "spec.toml", "--backend", backend, *args, env=env)
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    return job


def _compiled_here(cli, tmp_path: Path, backend: str = "cpu-check", env: dict | None = None, *args: str) -> Path:
    """The project compiled in ``tmp_path`` itself, for a test of what is cached: the job's sweeps and compares
    find their jobs in the cache by the paths of the user's files."""
    shutil.copy(HERE / "taps_models.py", tmp_path / "taps_models.py")
    (tmp_path / "net.py").write_text(NET, encoding="utf-8")
    (tmp_path / "spec.toml").write_text(SPEC, encoding="utf-8")
    proc = cli("compile", "spec.toml", "--backend", backend, *args, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    return job


@pytest.fixture
def cli(neffbench_unless_env):
    """``neffbench ARGS`` in this process, or in a child with the fake toolchain's environment."""
    return partial(neffbench_unless_env, timeout=600)


def _compare(cli, job: Path, *args: str, env: dict | None = None, code: int | None = EXIT_DIVERGENT) -> dict:
    """The compare's document, once it exited with ``code`` (None: within tolerance or divergent, either)."""
    proc = cli("compare", str(job), "--json", *args, cwd=job.parent.parent, env=env)
    codes = (EXIT_WITHIN, EXIT_DIVERGENT) if code is None else (code,)
    assert proc.returncode in codes, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_the_lossy_layer_is_first_divergent_against_float64_on_the_cpu_runtime(tmp_path, cli):
    job = _compiled_here(cli, tmp_path)
    doc = _compare(cli, job, "--runtime", "cpu")
    names = {t["name"]: t["module"] for t in doc["taps"]}
    assert doc["first_divergent"] == {
        "vs_eager": None,
        "vs_float64": next(n for n, m in names.items() if m == "layers.2.cast"),
    }
    assert doc["runtime"] == "cpu" and doc["job"] == job.name and doc["tapped_job"] != job.name
    assert doc["taps_changed_result"] is None and not doc["cached"]
    before = [
        t for t in doc["taps"] if list(names).index(t["name"]) < list(names).index(doc["first_divergent"]["vs_float64"])
    ]
    assert before and all(t["vs_float64"]["ok"] and t["vs_eager"]["ok"] for t in before)
    cast = next(t for t in doc["taps"] if t["module"] == "layers.2.cast")
    assert cast["source"].endswith("taps_models.py:13") and cast["dtype"] == "float32" and cast["shape"] == [2, 8]
    assert set(cast["vs_eager"]) >= {"max_abs", "max_rel", "cosine", "ok"} and cast["vs_eager"]["max_abs"] == 0
    # The tapped variant is a job of its own, linked to the job, kept and cached like any job.
    tapped = json.loads((job.parent / doc["tapped_job"] / "job.json").read_text())
    assert (
        tapped["taps_request"]["of"] == job.name
        and tapped["weights"]["sha256"] == json.loads((job / "job.json").read_text())["weights"]["sha256"]
    )
    assert len(list((job / "compares").glob("*.json"))) == 1
    again = _compare(cli, job, "--runtime", "cpu")
    assert again["cached"] and again["tapped_job"] != doc["tapped_job"]
    assert again["first_divergent"] == doc["first_divergent"]
    # The text report names it with its source line.
    text = cli("compare", str(job), "--runtime", "cpu", cwd=tmp_path).stdout
    assert "first divergent against float64: `layers.2.cast` (taps_models.py:13)" in text
    assert "against eager: every tap" in text and "Taps can change what the compiler fuses" in text
    assert doc["verdict"] == "divergent" and again["verdict"] == "divergent"


def test_the_exit_status_says_within_tolerance_divergent_or_not_compared(tmp_path, compiled, cli):
    """A script reads a compare's answer from its exit status, as it does check's and run's; --help says which."""
    job = _project(compiled, tmp_path, "cpu-check")
    before = cli("compare", str(job), "--runtime", "cpu", "--taps", "layers.0", "--taps", "layers.1", cwd=tmp_path)
    assert before.returncode == EXIT_WITHIN, before.stdout + before.stderr  # the taps before the lossy layer
    lossy = cli("compare", str(job), "--runtime", "cpu", "--taps", "layers.2.cast", cwd=tmp_path)
    assert lossy.returncode == EXIT_DIVERGENT and "first divergent against float64: `layers.2.cast`" in lossy.stdout
    nothing = cli("compare", str(job), "--runtime", "cpu", "--taps", "decoder.*", cwd=tmp_path)
    assert nothing.returncode == EXIT_NOT_COMPARED
    assert cli("compare", str(job), "--depth", "0", cwd=tmp_path).returncode == EXIT_INVALID
    helped = " ".join(cli("compare", "--help", cwd=tmp_path).stdout.split())
    assert f"{EXIT_WITHIN} every tap is within" in helped and f"{EXIT_DIVERGENT} a tap diverges" in helped
    assert f"{EXIT_NOT_COMPARED} it could not compare" in helped


def test_a_neff_job_on_a_host_without_a_neuroncore_says_it_cannot_compare_against_eager(tmp_path, compiled, cli):
    """The fake toolchain with no device: the job traces with cpu_backend=True, and the cpu runtime runs its module
    eagerly, which gives no tap. No tap is failed, none is first divergent against eager; the CPU run against
    float64 is still shown, as such, and the exit status says it could not compare."""
    env = fake_env()
    job = _project(compiled, tmp_path, "neuron", env)
    proc = cli("compare", str(job), "--depth", "1", cwd=tmp_path, env=env)
    assert proc.returncode == EXIT_NOT_COMPARED, proc.stdout + proc.stderr
    text = proc.stdout
    assert "cannot compare against eager: no device output on this host" in text
    assert "first divergent against eager" not in text and "CPU run against float64" in text
    rows = [line for line in text.splitlines() if line.startswith("tap")][1:]
    assert rows and all("not compared" in row and "no device output" not in row for row in rows)
    assert "first divergent of the CPU run against float64: `layers.2`" in text
    doc = _compare(cli, job, "--depth", "1", env=env, code=EXIT_NOT_COMPARED)
    assert doc["verdict"] == "could not compare" and doc["measured"] == "eager" and doc["runtime"] == "cpu"
    assert doc["first_divergent"]["vs_eager"] is None and doc["skipped"]["vs_eager"].startswith("no device output")
    assert doc["summary"][0].startswith("cannot compare against eager: no device output on this host")
    assert all(t["vs_eager"] is None and t["vs_float64"]["problem"] is None for t in doc["taps"])
    assert doc["files"]["device"] is None and doc["taps_changed_result"] is None


def test_taps_by_pattern_and_by_depth(tmp_path, compiled, cli):
    job = _project(compiled, tmp_path, "cpu-check")
    by_pattern = _compare(cli, job, "--runtime", "cpu", "--taps", "layers.*.mlp", "--taps", "head")
    assert [t["module"] for t in by_pattern["taps"]] == [f"layers.{i}.mlp" for i in range(4)] + ["head"]
    by_depth = _compare(cli, job, "--runtime", "cpu", "--depth", "1")
    assert [t["module"] for t in by_depth["taps"]] == [f"layers.{i}" for i in range(4)] + ["head"]
    assert by_depth["first_divergent"]["vs_float64"] == by_depth["taps"][2]["name"]
    bad = cli("compare", str(job), "--runtime", "cpu", "--taps", "decoder.*", cwd=tmp_path)
    assert bad.returncode == EXIT_NOT_COMPARED and "tap pattern 'decoder.*' matches no module" in bad.stderr


def test_a_perturbed_tap_of_the_fake_runtime_is_first_divergent_against_eager(tmp_path, cli):
    env = runtime_env()
    job = _compiled_here(cli, tmp_path, "neuron", env, "--target", "trn2", "--lnc", "2")  # as the fake device is
    # The fake runtime returns zeros unless told otherwise: every tap diverges from its first.
    zeros = _compare(cli, job, "--runtime", "nrtpy", "--depth", "1", env=env)
    assert zeros["runtime"] == "nrtpy" and zeros["first_divergent"]["vs_eager"] == zeros["taps"][0]["name"]
    # Told to return the tapped job's own reference with one tap off by 1%, that tap is first divergent.
    tapped = job.parent / zeros["tapped_job"]
    ref = arrays.load(tapped / "reference.npz")
    names = list(ref.arrays)
    wrong = names[len(names) - len(zeros["taps"]) + 3]  # the fourth tap: layers.3
    given = {n: (a * 1.01 if n == wrong else a) for n, a in ref.arrays.items()}
    np.savez(tmp_path / "outputs.npz", **given)
    env = runtime_env(outputs=tmp_path / "outputs.npz")
    doc = _compare(cli, job, "--runtime", "nrtpy", "--depth", "1", env=env)
    assert doc["cached"] and doc["first_divergent"]["vs_eager"] == doc["taps"][3]["name"]
    assert [t["vs_eager"]["ok"] for t in doc["taps"]] == [True, True, True, False, True]
    assert doc["taps"][3]["module"] == "layers.3" and doc["taps_changed_result"] is None


def test_the_report_says_when_the_taps_changed_the_result(tmp_path, monkeypatch, compiled):
    """The job's own output and the tapped variant's own output differ: the taps changed what was compiled."""
    from neffbench.numerics import compare as numerics

    job = _project(compiled, tmp_path, "cpu-check")
    monkeypatch.chdir(tmp_path)
    real = numerics.Compare._run

    def run(self, job_dir, what):
        outputs, record = real(self, job_dir, what)
        if what == "the job":  # as if the shipped graph had been fused into something else
            outputs = {k: v + 0.5 for k, v in outputs.items()}
        return outputs, record

    monkeypatch.setattr(numerics.Compare, "_run", run)
    result = numerics.Compare(job, runtime="cpu", depth=1).run()
    assert result.document["taps_changed_result"].startswith("the taps changed the result")
    assert any(line.startswith("the taps changed the result") for line in result.lines)


def test_bad_jobs_are_refused_with_a_sentence(tmp_path, compiled, cli):
    not_a_job = cli("compare", str(tmp_path), cwd=tmp_path)
    assert not_a_job.returncode == EXIT_INVALID and "is not a job directory (it has no job.json)" in not_a_job.stderr
    job = _project(compiled, tmp_path, "cpu-check")
    doc = _compare(cli, job, "--runtime", "cpu", "--depth", "1")
    tapped = cli("compare", str(job.parent / doc["tapped_job"]), cwd=tmp_path)
    assert tapped.returncode == EXIT_NOT_COMPARED and f"compare the job it taps ({job.name})" in tapped.stderr
    depth = cli("compare", str(job), "--depth", "0", cwd=tmp_path)
    assert depth.returncode == EXIT_INVALID and "--depth must be 1 or more" in depth.stderr


def test_a_hugging_face_models_taps_are_its_named_modules(tmp_path, cli):
    transformers = pytest.importorskip("transformers")
    (tmp_path / "spec.toml").write_text(
        """
name = "bert"
kernel = "module"
workdir = "wd"

[module]
entry = "transformers:BertModel"
call = "factory"
[module.kwargs.config]
entry = "transformers:BertConfig"
[module.kwargs.config.kwargs]
hidden_size = 32
num_hidden_layers = 2
num_attention_heads = 2
intermediate_size = 64
vocab_size = 100

[module.constants]
return_dict = false

[inputs]
input_ids = "i64[1,8]"
""",
        encoding="utf-8",
    )
    proc = cli("compile", "spec.toml", "--backend", "cpu-check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    doc = _compare(cli, job, "--runtime", "cpu", "--taps", "encoder.layer.*", code=None)
    config = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    named = {name for name, _ in transformers.BertModel(config).named_modules()}
    assert [t["module"] for t in doc["taps"]] == ["encoder.layer.0", "encoder.layer.1"]
    assert all(t["module"] in named for t in doc["taps"])
    assert doc["first_divergent"]["vs_eager"] is None


def test_a_sweep_run_and_compared_has_latency_and_error_for_each_point(tmp_path, cli):
    job = _compiled_here(cli, tmp_path)
    proc = cli(
        "sweep", "spec.toml", "--over", "compiler.optlevel=1,2", "--backend", "cpu-check", "--compare",
        "--runtime", "cpu", "--compare-depth", "1", "--iterations", "3", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "first divergent against float64: layers.2" in proc.stderr
    swept = json.loads(proc.stdout)
    rows = swept["rows"]
    assert len(rows) == 2
    for row in rows:
        assert row["latency"]["runtime"] == "cpu" and row["latency"]["p50_ms"] > 0
        accuracy = row["accuracy"]
        assert accuracy["vs_eager"] == 0 and accuracy["match"] is True and accuracy["vs_float64"] > 0
        assert accuracy["first_divergent"]["vs_eager"] is None and accuracy["first_divergent"]["vs_float64"]
        # The latency is the timed run's, not the compare's single call.
        latest = json.loads(Path(row["latency"]["run"]).read_text())
        assert latest["purpose"] is None and latest["iterations_requested"] == 3
    assert job.is_dir()
    table = cli("sweep", "show", swept["sweep_id"], "--workdir", "wd", cwd=tmp_path).stdout
    assert "run error" in table and "f64" in table


def test_a_sweep_shows_any_layers_error_in_each_point(tmp_path, cli):
    """``sweep show --layer PATH``: each point's figures at that module, its own compare's, so a layer made lossy
    in one point and not in the other shows it."""
    _compiled_here(cli, tmp_path)
    proc = cli(
        "sweep", "spec.toml", "--over", "module.kwargs.lossy_at=2,3", "--backend", "cpu-check", "--compare",
        "--runtime", "cpu", "--compare-depth", "1", "--iterations", "3", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sweep_id = json.loads(proc.stdout)["sweep_id"]
    show = ("sweep", "show", sweep_id, "--workdir", "wd")
    shown = cli(*show, "--layer", "layers.2", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    rows = {r["values"]["module.kwargs.lossy_at"]: r for r in json.loads(shown.stdout)["rows"]}
    for row in rows.values():
        compared = json.loads((tmp_path / row["accuracy"]["compare"]).read_text())
        (tap,) = [t for t in compared["taps"] if t["module"] == "layers.2"]
        assert row["layer"] == {
            "path": "layers.2",
            "time_s": None,  # not profiled
            "share": None,
            "vs_eager": tap["vs_eager"]["max_abs"],
            "vs_float64": tap["vs_float64"]["max_abs"],
        }
        assert "layers" not in row  # the one module asked for, not the whole tree
    assert rows[2]["layer"]["vs_float64"] > 100 * rows[3]["layer"]["vs_float64"]
    table = cli(*show, "--layer", "layers.2", cwd=tmp_path).stdout
    assert "layers.2 in each point" in table and "lossy_at=3" in table.split("layers.2 in each point")[1]
    wrong = cli(*show, "--layer", "layers.9", cwd=tmp_path)
    assert wrong.returncode == SHOW_INVALID
    assert "--layer layers.9: no point's model has a module of that path (they have" in wrong.stderr
    not_show = cli("sweep", "spec.toml", "--over", "compiler.optlevel=1,2", "--layer", "layers.2", cwd=tmp_path)
    assert not_show.returncode == SHOW_INVALID
    assert "only 'neffbench sweep show SWEEP_ID' shows a layer" in not_show.stderr


def test_a_kernel_without_submodules_is_compared_at_its_outputs(seed_cpu_check_job, cli):
    """RoPE's module calls no submodule: its own outputs (query and key) are the taps, at depth 0."""
    job = seed_cpu_check_job
    doc = _compare(cli, job, "--runtime", "cpu", code=EXIT_WITHIN)
    assert [(t["module"], t["depth"]) for t in doc["taps"]] == [("(output 0)", 0), ("(output 1)", 0)]
    assert doc["first_divergent"] == {"vs_eager": None, "vs_float64": None}
    assert all(t["vs_float64"]["max_abs"] > 0 for t in doc["taps"])  # float32 is not float64
    assert "its own outputs are the taps" in " ".join(doc["notes"])
