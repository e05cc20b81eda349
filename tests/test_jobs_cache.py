"""Identical compiles come from the cache: what the key covers, what a hit brings, and what is never served."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from neffbench.jobs import cache
from neffbench.presets import load_preset
from tests.cli import neffbench
from tests.fakes import fake_env

REPO = Path(__file__).resolve().parents[1]
SEED = load_preset("seed")


_cli = neffbench


def _records(workdir: Path) -> list[dict]:
    recs = [json.loads(p.read_text()) for p in workdir.glob("*/job.json")]
    return sorted(recs, key=lambda r: r["created"])


def test_the_key_covers_what_changes_the_neff_and_nothing_else(monkeypatch):
    base = cache.digest(cache.key(SEED, "neuron"))
    same = [
        dataclasses.replace(SEED, name="other"),
        dataclasses.replace(SEED, workdir="elsewhere"),
        dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, seed=7)),
        dataclasses.replace(SEED, compiler=dataclasses.replace(SEED.compiler, timeout=5.0)),
    ]
    for spec in same:
        assert cache.digest(cache.key(spec, "neuron")) == base
    different = [
        dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(2,))),
        dataclasses.replace(SEED, compiler=dataclasses.replace(SEED.compiler, optlevel=3)),
        dataclasses.replace(SEED, compiler=dataclasses.replace(SEED.compiler, extra_args=("--verbose", "debug"))),
    ]
    for spec in different:
        assert cache.digest(cache.key(spec, "neuron")) != base
    assert cache.digest(cache.key(SEED, "cpu-check")) != base
    monkeypatch.setattr(cache, "dist_version", lambda dist: "9.9" if dist == "neuronx-cc" else None)
    assert cache.digest(cache.key(SEED, "neuron")) != base


@pytest.mark.slow
def test_a_hit_reuses_the_neff_by_hard_link_and_says_where_it_came_from(tmp_path, neffbench_in_process):
    env = fake_env("success")
    first = _cli("compile", "seed", "--workdir", str(tmp_path), env=env)
    assert first.returncode == 0, first.stderr
    second = _cli("compile", "seed", "--name", "seed-again", "--workdir", str(tmp_path), env=env)
    assert second.returncode == 0, second.stderr
    original, hit = _records(tmp_path)
    assert original["cache"] == {"hit": False}
    assert hit["cache"]["hit"] is True and hit["cache"]["from"].endswith(original["job_id"])
    assert hit["cache"]["saved_s"] == original["duration_s"] and hit["cache"]["how"] == "hard link"
    assert hit["worker_pid"] is None and list(hit["stages"]) == ["cache", "done"]
    assert hit["outcome"] == "succeeded" and hit["neffs"][0]["sha256"] == original["neffs"][0]["sha256"]
    src = tmp_path / original["job_id"] / "compiler" / "graph.neff"
    dst = tmp_path / hit["job_id"] / "compiler" / "graph.neff"
    assert os.stat(src).st_ino == os.stat(dst).st_ino
    for name in ("model.pt", "inputs.npz", "reference.npz", "reproduce.py"):
        assert (tmp_path / hit["job_id"] / name).is_file(), name
    assert f"served from the cache of {tmp_path / original['job_id']}" in second.stdout
    listing = neffbench_in_process("list", str(tmp_path))
    assert "succeeded (cached)" in listing.stdout
    # The run issue's step after the compile works on a cached job too.
    run = _cli("run", str(tmp_path / hit["job_id"]), "--runtime", "cpu", "--iterations", "2")
    assert run.returncode == 0, run.stdout


@pytest.mark.slow
def test_failures_are_never_served_and_no_cache_compiles_again(tmp_path):
    failed = _cli("compile", "seed", "--workdir", str(tmp_path), env=fake_env("compile-error"))
    assert failed.returncode == 1
    ok = _cli("compile", "seed", "--workdir", str(tmp_path), env=fake_env("success"))
    assert ok.returncode == 0
    bad, good = _records(tmp_path)
    assert bad["cache_key"] is None and good["cache"] == {"hit": False}
    again = _cli("compile", "seed", "--workdir", str(tmp_path), "--no-cache", env=fake_env("success"))
    assert again.returncode == 0
    assert _records(tmp_path)[-1]["cache"] == {"hit": False, "reason": "--no-cache"}
    # Another backend is another key: a cpu-check compile is not served a neuron NEFF.
    check = _cli("compile", "seed", "--workdir", str(tmp_path), "--backend", "cpu-check", env=fake_env("success"))
    assert check.returncode == 0 and not _records(tmp_path)[-1]["cache"]["hit"]


@pytest.mark.slow
def test_a_deleted_neff_is_not_served(tmp_path):
    env = fake_env("success")
    assert _cli("compile", "seed", "--workdir", str(tmp_path), env=env).returncode == 0
    (original,) = _records(tmp_path)
    (tmp_path / original["job_id"] / "compiler" / "graph.neff").unlink()
    assert _cli("compile", "seed", "--workdir", str(tmp_path), env=env).returncode == 0
    assert _records(tmp_path)[-1]["cache"] == {"hit": False}
