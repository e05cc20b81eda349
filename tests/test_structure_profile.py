"""Device time per layer, through the fake toolchain and the fake neuron-explorer: a job's profile is captured from
its profiled variant (compiled with the framework's debug names), read back with its NEFF from the Parquet tables,
and each layer gets exactly the time the profile's own tables give it."""

from __future__ import annotations

import json
import os
import shutil
import stat
from functools import partial
from pathlib import Path

import pytest

from neffbench.runs.profile_tables import intervals
from neffbench.structure.profile_map import busy_ns
from tests.cli import neffbench
from tests.fakes import RUNTIME_BIN_DIR, runtime_env
from tests.test_structure import NET, own_copy

pd = pytest.importorskip("pandas")  # the test extra installs it; the product names the [profile] extra without it
pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent
_cli = partial(neffbench, timeout=600)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory) -> tuple[Path, dict]:
    """The four-layer model compiled with the fake toolchain, then run with --profile on the fake runtime."""
    root = tmp_path_factory.mktemp("profiled")
    shutil.copy(HERE / "taps_models.py", root / "taps_models.py")
    (root / "net.py").write_text(NET, encoding="utf-8")
    env = runtime_env()
    args = ("--input", "x:f32[2,8]", "--workdir", "wd", "--backend", "neuron", "--target", "trn2", "--lnc", "2")
    proc = _cli("compile", "net.py:Net", *args, cwd=root, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (job,) = [p.parent for p in root.glob("wd/*/job.json")]
    run = _cli("run", str(job), "--runtime", "nrtpy", "--iterations", "2", "--profile", "--json", cwd=root, env=env)
    record = json.loads(run.stdout)
    assert record["profile"]["captured"], run.stderr
    return job, {"record": record, "stderr": run.stderr, "env": env}


def _tables(record: dict, name: str):
    folder = Path(record["profile"]["processed"]).parent / "profile"
    files = sorted(folder.glob(f"{name}.parquet")) or sorted(folder.glob(f"{name}_*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def test_each_layer_gets_the_time_the_profiles_own_tables_give_it(profiled):
    job, run = profiled
    record = run["record"]
    doc = json.loads(_cli("structure", str(job), "--json", cwd=job.parent.parent).stdout)
    nodes = {n["path"]: n for n in doc["nodes"]}
    # The profile's own hierarchy: a FrameworkNode per level of the framework names, each with its merged time.
    frameworks = _tables(record, "FrameworkNode")
    top = frameworks[frameworks["parent_name"].str.startswith("Net[")]
    by_block = {row.node_name: busy_ns(intervals(row.time_intervals)) for row in top.itertuples()}
    assert set(by_block) == {f"Block[{i}]" for i in range(4)} | {"Linear[head]"}
    for i in range(4):
        assert round(nodes[f"layers.{i}"]["time"]["seconds"] * 1e9) == by_block[f"Block[{i}]"]
    assert round(nodes["head"]["time"]["seconds"] * 1e9) == by_block["Linear[head]"]
    # The NEFF's total as the profile states it, and each layer's share of it.
    (total,) = _tables(record, "Summary")["total_time"]
    assert doc["profile"]["whole"]["total_time"] == total
    assert nodes["layers.2"]["time"]["share"] == pytest.approx(nodes["layers.2"]["time"]["seconds"] / total)
    # Deeper layers too, and their engine instructions as the FrameworkInstruction rows count them.
    up = _tables(record, "FrameworkInstruction")
    rows = up[up["framework_name"].str.contains("Block\\[1\\]/MLP\\[mlp\\]/Linear\\[up\\]", regex=True)]
    assert nodes["layers.1.mlp.up"]["time"]["instructions"]["tensor"] == int(
        rows["tensor_engine_instruction_count"].sum()
    )
    assert round(nodes["layers.1.mlp.up"]["time"]["seconds"] * 1e9) == busy_ns(
        [i for value in rows["time_intervals"] for i in intervals(value)]
    )
    # Every figure says which profile it came from: the run, the NEFF (the profiled variant's) and the tool.
    profile = doc["profile"]
    assert Path(profile["run"]).parent == job / "runs" and profile["tool"] == "neuron-explorer"
    assert profile["tool_version"].startswith("neuron-explorer 2.") and profile["source"] == "parquet"
    assert "-profiled-" in profile["neff"] and profile["unmapped"] == []
    assert profile["peak"].startswith("trn2 (LNC 2), FP32") and "trainium2.rst" in profile["peak"]
    assert 0 < nodes["layers.0.mlp.up"]["time"]["peak_share"] < 1


def test_the_profile_comes_from_a_variant_with_the_debug_names(profiled):
    job, run = profiled
    assert "the profile is captured from the profiled variant" in run["stderr"]
    (variant,) = [p for p in job.parent.iterdir() if "-profiled-" in p.name and p.is_dir()]
    record = json.loads((variant / "job.json").read_text())
    assert (
        record["profiled_request"] == {"of": job.name}
        and record["cache_key"] != json.loads((job / "job.json").read_text())["cache_key"]
    )
    assert "XLA_IR_DEBUG=1" in (variant / "job.log").read_text()
    assert not (variant / "structure.json").exists()  # a variant's structure is its job's
    # Its NEFF, made with the names, carries them; the job's own has none.
    profile = run["record"]["profile"]
    assert profile["neff"].startswith(str(variant)) and profile["open"].startswith("neuron-explorer view -n ")
    again = _cli(
        "run", str(job), "--runtime", "nrtpy", "--iterations", "1", "--profile", cwd=job.parent.parent, env=run["env"]
    )
    assert "(served from the cache" in again.stdout, again.stdout + again.stderr


def test_a_profile_that_cannot_be_read_says_so_in_the_tools_words(profiled, tmp_path):
    job, run = profiled
    job = own_copy(job, tmp_path)  # its run adds a profile: the module's job keeps only the first
    env = {**run["env"], "FAKE_PROFILE_VIEW_ERROR": "ERRO[0003] ERROR_PROCESS_INCOMPLETE: profile too large"}
    proc = _cli("run", str(job), "--runtime", "nrtpy", "--iterations", "1", "--profile", cwd=job.parent.parent, env=env)
    text = proc.stdout + proc.stderr
    assert "neuron-explorer view could not process the profile: ERRO[0003] ERROR_PROCESS_INCOMPLETE" in text
    assert "could not read the profile's summary: ERRO[0003]" in text
    (latest,) = sorted((job / "runs").glob("*.json"))[-1:]
    profile = json.loads(latest.read_text())["profile"]
    assert profile["captured"] and profile["summary"]["total_time"] is None
    assert any("profile too large" in p for p in profile["problems"])


def test_without_pandas_the_summary_is_read_and_the_extra_named(profiled, tmp_path):
    job, run = profiled
    job = own_copy(job, tmp_path)  # its run adds a profile: the module's job keeps only the first
    stub = tmp_path / "stub"
    (stub / "pandas").mkdir(parents=True)
    (stub / "pandas" / "__init__.py").write_text("raise ImportError('No module named pandas', name='pandas')\n")
    env = {**run["env"], "PYTHONPATH": os.pathsep.join([str(stub), run["env"]["PYTHONPATH"]])}
    proc = _cli(
        "run",
        str(job),
        "--runtime",
        "nrtpy",
        "--iterations",
        "1",
        "--profile",
        "--json",
        cwd=job.parent.parent,
        env=env,
    )
    profile = json.loads(proc.stdout)["profile"]
    assert profile["source"] == "summary-json" and profile["summary"]["total_time"] is not None
    assert any("pip install 'neffbench[profile]'" in p for p in profile["problems"])
    # The structure says the profile names no layer, rather than showing times it does not have.
    text = _cli("structure", str(job), cwd=job.parent.parent).stdout
    assert "the profile names no layer" in text


def test_the_legacy_neuron_profile_json_gives_layers_their_time(profiled, tmp_path):
    """Where only the deprecated neuron-profile is installed, its JSON output's instructions name their layer."""
    job, run = profiled
    job = own_copy(job, tmp_path)  # its run adds a profile: the module's job keeps only the first
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("neuron-profile", "neuron-ls"):  # the runtime's tools but neuron-explorer
        tool = bin_dir / name
        tool.write_text(f'#!/bin/sh\nexec "{RUNTIME_BIN_DIR / name}" "$@"\n')
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    path = [p for p in run["env"]["PATH"].split(os.pathsep) if Path(p) != RUNTIME_BIN_DIR]
    env = {**run["env"], "PATH": os.pathsep.join([str(bin_dir), *path])}
    proc = _cli(
        "run",
        str(job),
        "--runtime",
        "nrtpy",
        "--iterations",
        "1",
        "--profile",
        "--json",
        cwd=job.parent.parent,
        env=env,
    )
    profile = json.loads(proc.stdout)["profile"]
    assert profile["tool"] == "neuron-profile" and profile["source"] == "json", proc.stderr
    doc = json.loads(_cli("structure", str(job), "--json", cwd=job.parent.parent).stdout)
    nodes = {n["path"]: n for n in doc["nodes"]}
    assert doc["profile"]["tool"] == "neuron-profile" and nodes["layers.3"]["time"]["seconds"] > 0
