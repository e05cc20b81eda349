"""Job records: directory names, atomic job.json, NEFFs found by glob, and interrupted jobs."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading

import pytest

from neffbench.jobs import record_start, records
from neffbench.presets import load_preset
from neffbench.spec import spec_hash

WHEN = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


@pytest.fixture
def seed():
    return load_preset("seed")


def test_job_dir_name(seed):
    assert records.job_dir_name(seed, WHEN) == f"seed-20260102T030405Z-{spec_hash(seed)[:8]}"


def test_compiles_started_at_once_never_share_a_directory(tmp_path, seed):
    made = []
    lock = threading.Lock()

    def make():
        path = records.create_job_dir(tmp_path, seed, WHEN)
        with lock:
            made.append(path)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({p.name for p in made}) == 8
    assert all(p.is_dir() for p in made)


def test_new_record_has_the_agreed_keys(tmp_path, seed):
    job_dir = records.create_job_dir(tmp_path, seed)
    rec = record_start.new_record(seed, job_dir, backend_requested="auto", timeout=None, argv=["neffbench", "compile"])
    for key in (
        "schema_version",
        "job_id",
        "spec",
        "spec_hash",
        "backend",
        "backend_reason",
        "outcome",
        "reason",
        "created",
        "compiler_command",
        "neffs",
        "stages",
        "numerics",
        "versions",
        "host",
        "argv",
        "pid",
        "exit_code",
        "makes_neff",
    ):
        assert key in rec, key
    assert rec["outcome"] == "running" and rec["job_id"] == job_dir.name and rec["backend"] is None
    assert set(rec["compiler_command"]) >= {"requested", "actual"}
    assert rec["created"].endswith("Z")
    records.write_record(job_dir, rec)
    assert records.read_record(job_dir) == json.loads(json.dumps(rec))
    assert [p.name for p in job_dir.iterdir()] == ["job.json"]  # no temporary file left behind


def test_neffs_are_found_by_glob_with_size_and_hash(tmp_path):
    (tmp_path / "compiler" / "sub").mkdir(parents=True)
    (tmp_path / "compiler" / "graph.1a2b3c.neff").write_bytes(b"x" * 10)
    (tmp_path / "compiler" / "sub" / "other.neff").write_bytes(b"")
    entries = records.neff_entries(tmp_path)
    assert [e["path"] for e in entries] == ["compiler/graph.1a2b3c.neff", "compiler/sub/other.neff"]
    assert entries[0]["size"] == 10
    assert entries[1]["sha256"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return int(proc.stdout)


def _running_record(tmp_path, seed, **fields):
    job_dir = records.create_job_dir(tmp_path, seed)
    rec = record_start.new_record(seed, job_dir, backend_requested="cpu-check", timeout=None)
    rec.update(stage="tracing", **fields)
    records.write_record(job_dir, rec)
    return job_dir


def test_jobs_of_a_dead_process_are_marked_interrupted(tmp_path, seed):
    dead = _running_record(tmp_path, seed, pid=_dead_pid(), pid_start=None)
    alive = _running_record(tmp_path, seed)  # this process
    elsewhere = _running_record(tmp_path, seed, pid=_dead_pid(), host="another-host")
    assert records.mark_interrupted(tmp_path) == [dead]
    rec = records.read_record(dead)
    assert rec["outcome"] == "interrupted" and "'tracing'" in rec["reason"] and rec["finished"]
    assert records.read_record(alive)["outcome"] == "running"
    assert records.read_record(elsewhere)["outcome"] == "running"
    assert records.mark_interrupted(tmp_path) == []


def test_a_reused_pid_does_not_keep_a_job_running(tmp_path, seed):
    job_dir = _running_record(tmp_path, seed, pid=os.getpid(), pid_start="1")  # our pid, another start time
    assert records.mark_interrupted(tmp_path) == [job_dir]


def test_unreadable_records_are_skipped(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "job.json").write_text("{not json")
    assert records.mark_interrupted(tmp_path) == []
    assert records.mark_interrupted(tmp_path / "missing") == []


def test_the_parent_side_imports_neither_torch_nor_qt():
    code = (
        "import sys, neffbench.jobs, neffbench.jobs.summary, neffbench.cli.compile_cmd\n"
        "from neffbench.jobs import CompileJob, run_buckets\n"
        "print(sorted(m for m in ('torch', 'PySide6', 'torch_neuronx') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert proc.stdout.strip() == "[]"


def test_last_duration_is_the_newest_succeeded_job_of_the_same_spec(tmp_path):
    import json

    from neffbench.jobs.records import last_duration
    from neffbench.kernels import registry
    from neffbench.presets import load_preset
    from neffbench.spec import spec_hash

    spec = load_preset("seed")
    same = spec_hash(registry.for_spec(spec).for_bucket(spec, {"num_tokens": 1}))

    def job(name, **rec):
        (tmp_path / name).mkdir()
        (tmp_path / name / "job.json").write_text(json.dumps(rec))

    job("a", spec_hash=same, outcome="succeeded", backend="cpu-check", duration_s=3.0, created="2026-01-01T00:00:00Z")
    job("b", spec_hash=same, outcome="succeeded", backend="cpu-check", duration_s=2.0, created="2026-01-02T00:00:00Z")
    job("c", spec_hash=same, outcome="failed", backend="cpu-check", duration_s=9.0, created="2026-01-03T00:00:00Z")
    job(
        "d", spec_hash="other", outcome="succeeded", backend="cpu-check", duration_s=7.0, created="2026-01-04T00:00:00Z"
    )
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "job.json").write_text("{not json")
    assert last_duration(tmp_path, spec, "cpu-check") == 2.0
    assert last_duration(tmp_path, spec, "neuron") is None
    # Served from the cache in no time: no compile's time, so "last time this spec took" is still b's.
    job(
        "f",
        spec_hash=same,
        outcome="succeeded",
        backend="cpu-check",
        duration_s=0.02,
        created="2026-01-05T00:00:00Z",
        cache={"hit": True, "from": "b"},
    )
    assert last_duration(tmp_path, spec, "cpu-check") == 2.0
