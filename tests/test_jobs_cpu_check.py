"""The cpu-check backend for real (torch.jit.trace in a worker), buckets, and the runner's API edges."""

from __future__ import annotations

import dataclasses
import json
import threading

import pytest
import torch

from neffbench.jobs import CompileJob, read_record, run_buckets
from neffbench.kernels.rope.build import build_module, example_inputs
from neffbench.presets import load_preset
from neffbench.spec import SpecError, load, spec_hash

SEED = load_preset("seed")


@pytest.fixture(scope="module")
def seed_job(tmp_path_factory):
    lines: list[str] = []
    events: list[dict] = []
    runner = CompileJob(
        SEED, workdir=tmp_path_factory.mktemp("cpu"), backend="cpu-check", on_line=lines.append, on_event=events.append
    )
    job_dir = runner.start()
    assert runner.job_dir == job_dir and read_record(job_dir)["outcome"] == "running"
    return runner.wait(), lines, events


@pytest.mark.slow
def test_cpu_check_succeeds_and_says_no_neff(seed_job):
    result, _, _ = seed_job
    rec = result.record
    assert (result.outcome, result.exit_code, result.reason, result.neffs) == ("succeeded", 0, None, [])
    assert rec["backend"] == "cpu-check" and rec["makes_neff"] is False
    assert "no NEFF is made" in rec["backend_reason"]
    assert rec["neff_note"] == "no NEFF (cpu-check)"
    assert rec["compiler"] is None and rec["compiler_command"]["requested"] is None
    assert rec["compiler_command"]["actual"] is None
    assert list(rec["stages"]) == [
        "building",
        "weights",
        "reference",
        "tracing",
        "saving",
        "structure",
        "verifying",
        "done",
    ]
    assert rec["spec_hash"] == spec_hash(SEED) and rec["job_id"] == result.job_dir.name
    assert rec["versions"]["torch"] == torch.__version__ and rec["versions"]["torch_neuronx"] is None
    assert rec["exit_code"] == 0 and rec["worker_pid"] and rec["pid"]
    assert not list(result.job_dir.glob("**/*.neff"))
    assert json.loads((result.job_dir / "job.json").read_text()) == json.loads(json.dumps(rec))


@pytest.mark.slow
def test_cpu_check_numerics_and_saved_module(seed_job):
    result, _, _ = seed_job
    numerics = result.numerics
    assert numerics["checked"] and numerics["match"] and numerics["device_verified"] is False
    assert "no NEFF, cpu-check" in numerics["where"]
    assert numerics["max_abs_error"] == 0.0 and (numerics["atol"], numerics["rtol"]) == (1e-5, 1e-5)
    assert [o["name"] for o in numerics["example_inputs"]["outputs"]] == ["output0", "output1"]
    assert numerics["fresh_inputs"]["match"]
    loaded = torch.jit.load(str(result.job_dir / "model.pt"))
    inputs = example_inputs(SEED)
    for got, want in zip(loaded(*inputs), build_module(SEED)(*inputs)):
        torch.testing.assert_close(got, want)
    assert load(result.job_dir / "spec.toml") == SEED


@pytest.mark.slow
def test_cpu_check_log_and_events(seed_job):
    result, lines, events = seed_job
    log = (result.job_dir / "job.log").read_text(encoding="utf-8")
    assert log.splitlines() == lines
    assert any("no NEFF, cpu-check" in line for line in lines)
    stages = [e["stage"] for e in events if e["type"] == "stage"]
    assert stages == ["building", "weights", "reference", "tracing", "saving", "structure", "verifying", "done"]
    assert events[-1] == {
        **events[-1],
        "type": "finished",
        "outcome": "succeeded",
        "exit_code": 0,
        "makes_neff": False,
        "neffs": [],
        "neff_note": "no NEFF (cpu-check)",
    }


def test_runner_rejects_what_it_cannot_run(tmp_path):
    two_buckets = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(1, 2)))
    with pytest.raises(ValueError, match="one bucket"):
        CompileJob(two_buckets, workdir=tmp_path)
    with pytest.raises(ValueError, match="backend"):
        CompileJob(SEED, workdir=tmp_path, backend="gpu")
    bad = dataclasses.replace(SEED, model=dataclasses.replace(SEED.model, rotary_dim=63))
    with pytest.raises(SpecError):
        CompileJob(bad, workdir=tmp_path)
    with pytest.raises(SpecError):
        run_buckets(bad, workdir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError, match="start"):
        CompileJob(SEED, workdir=tmp_path).wait()


def test_cancel_before_start_records_a_cancelled_job_without_a_process(tmp_path):
    events: list[dict] = []
    runner = CompileJob(SEED, workdir=tmp_path, backend="cpu-check", on_event=events.append)
    runner.cancel()
    job_dir = runner.start()
    result = runner.wait()
    assert result.outcome == "cancelled" and result.reason == "cancelled before it started"
    assert result.exit_code is None and result.record["worker_pid"] is None
    assert read_record(job_dir)["outcome"] == "cancelled"
    assert [e["type"] for e in events] == ["finished"]
    runner.cancel()  # harmless once finished


@pytest.mark.slow
def test_buckets_in_parallel_each_get_a_job(tmp_path):
    spec = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(1, 3)))
    lines: list[str] = []
    lock = threading.Lock()

    def on_line(line: str) -> None:
        with lock:
            lines.append(line)

    results = run_buckets(spec, workdir=tmp_path, backend="cpu-check", jobs=2, on_line=on_line)
    assert [r.record["num_tokens"] for r in results] == [1, 3]
    assert all(r.outcome == "succeeded" for r in results)
    assert len({r.job_dir for r in results}) == 2
    assert results[1].numerics["example_inputs"]["outputs"][0]["shape"] == [3, 2048]
    assert any(line.startswith("[num_tokens=3] ") for line in lines)
    assert load(results[1].job_dir / "spec.toml").inputs.num_tokens == (3,)


def test_a_set_cancel_event_cancels_every_bucket(tmp_path):
    spec = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(1, 2)))
    cancel = threading.Event()
    cancel.set()
    results = run_buckets(spec, workdir=tmp_path, backend="cpu-check", cancel_event=cancel)
    assert [r.outcome for r in results] == ["cancelled", "cancelled"]
