"""Run and sweep records are read through frozen typed views; older records read, newer ones are refused."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from neffbench.runs.history import mark_interrupted, runs
from neffbench.runs.stats import summarize
from neffbench.runs.summary import summary_lines
from neffbench.sweeps.record import list_sweeps, load
from neffbench.views import run as run_view
from neffbench.views import sweep as sweep_view
from neffbench.views.job import JobView, RecordError
from neffbench.views.run import RunView
from neffbench.views.sweep import SweepView
from tests.test_old_job_dirs import _old_job
from tests.test_sweep_record import _fake_job, _record

# A run record as the first neffbench that ran NEFFs wrote it: no pid, pid_start, warnings, variant or exit_code.
FIRST_RUN = {
    "schema_version": 1,
    "run_id": "20260101T000000.000000Z-cpu",
    "job_id": "j0",
    "neff": None,
    "runtime_requested": "auto",
    "runtime": "cpu",
    "label": "CPU",
    "on_device": False,
    "runtime_reason": "no NeuronCore here",
    "mode": "sync",
    "core": 0,
    "warmup": 5,
    "iterations_requested": 3,
    "outcome": "succeeded",
    "reason": None,
    "started": "2026-01-01T00:00:00Z",
    "finished": "2026-01-01T00:00:01Z",
    "host": "elsewhere",
    "command": ["neffbench", "run"],
    "versions": {},
    "inputs": None,
    "checks": [],
    "numerics": None,
    "cold_ms": 1.5,
    "durations_ms": [1.0, 2.0, 3.0],
    "stats": summarize([1.0, 2.0, 3.0], 1),
    "reported": None,
    "secondary": None,
    "profile": None,
    "bucket": {"num_tokens": 1},
    "items_per_call": 1,
    "run_dir": "20260101T000000.000000Z-cpu",
}


def test_a_first_layout_run_record_reads_into_a_view():
    view = RunView.of(FIRST_RUN)
    assert (view.schema_version, view.outcome, view.runtime, view.on_device) == (1, "succeeded", "cpu", False)
    assert view.durations_ms == (1.0, 2.0, 3.0) and view.stats == summarize([1.0, 2.0, 3.0], 1)
    assert (view.pid, view.pid_start, view.warnings, view.variant, view.exit_code) == (None, None, (), None, None)
    assert view.succeeded_with_timings and view.where == "CPU" and RunView.of(view) is view
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.outcome = "failed"  # type: ignore[misc]
    assert summary_lines(view) == summary_lines(FIRST_RUN)


def test_run_records_on_disk_read_into_views_and_a_newer_one_is_left_out(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a-cpu.json").write_text(json.dumps(FIRST_RUN))
    (folder / "b-cpu.json").write_text(json.dumps({**FIRST_RUN, "schema_version": run_view.SCHEMA_VERSION + 1}))
    (folder / "c-cpu.json").write_text("[1, 2]")
    found = runs(folder)
    assert [RunView.of(r).path for r in found] == [str(folder / "a-cpu.json")]


def test_a_newer_running_run_record_is_not_rewritten(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import platform

    newer = {**FIRST_RUN, "schema_version": 99, "outcome": "running", "host": platform.node(), "pid": int(gone.stdout)}
    (folder / "n-cpu.json").write_text(json.dumps(newer))
    assert mark_interrupted(folder) == [] and json.loads((folder / "n-cpu.json").read_text())["outcome"] == "running"


def test_missing_and_mistyped_run_fields_are_none_or_empty():
    view = RunView.of(
        {"durations_ms": [1, "x", True, 2.5], "stats": [], "on_device": None, "core": "0", "checks": None, "extra": 1}
    )
    assert view.schema_version == 1 and view.outcome is None and view.run_id is None
    assert view.durations_ms == (1.0, 2.5) and view.stats is None and view.on_device is False
    assert view.core is None and view.checks == () and view.bucket == {} and view.raw["extra"] == 1
    assert not view.succeeded_with_timings and view.where == "(?)"


def test_a_run_record_from_a_newer_schema_is_refused_with_a_sentence():
    with pytest.raises(
        RecordError, match=r"runs/x.json has schema_version 2, newer than this neffbench reads \(up to 1\)"
    ):
        RunView.of({"schema_version": 2}, "runs/x.json")
    with pytest.raises(RecordError, match="holds a JSON list, not a run record object"):
        RunView.of([1])  # type: ignore[arg-type]


def test_every_sweep_record_the_tests_write_reads_into_a_view(tmp_path):
    record = _record(tmp_path)
    record.update_point(0, state="succeeded", job_id=_fake_job(tmp_path, "j0"), node="node-a")
    view = SweepView.of(load(tmp_path, record.sweep_id))
    assert view.schema_version == 1 and view.sweep_id == record.sweep_id and view.state == "running"
    assert view.fields == ["compiler.optlevel"] and [p.state for p in view.points] == [
        "succeeded",
        "pending",
        "invalid",
    ]
    first, _, invalid = view.points
    assert (first.index, first.job_id, first.node, first.cached) == (0, "j0", "node-a", False)
    assert invalid.problems and invalid.problems[0]["severity"] == "error"
    assert view.path and view.counts == {"succeeded": 1, "pending": 1, "invalid": 1}
    assert SweepView.of(view) is view
    assert [SweepView.of(s).sweep_id for s in list_sweeps(tmp_path)] == [record.sweep_id]


def test_missing_and_mistyped_sweep_fields_are_none_or_empty():
    view = SweepView.of({"points": [{"state": 3}, "x", {"index": 4, "values": [], "lost_attempts": None}], "axes": [1]})
    assert view.schema_version == 1 and view.sweep_id is None and view.axes == () and view.fields == []
    assert [(p.index, p.state) for p in view.points] == [(0, "pending"), (4, "pending")]
    assert view.points[1].values == {} and view.points[1].lost_attempts == () and view.counts == {}


def test_a_sweep_record_from_a_newer_schema_is_refused_and_left_out_of_the_list(tmp_path):
    with pytest.raises(RecordError, match=r"sweep.json has schema_version 2, newer than this neffbench reads"):
        SweepView.of({"schema_version": sweep_view.SCHEMA_VERSION + 1, "points": []})
    record = _record(tmp_path)
    data = json.loads(record.path.read_text())
    record.path.write_text(json.dumps({**data, "schema_version": sweep_view.SCHEMA_VERSION + 1}))
    with pytest.raises(RecordError, match="written by a newer neffbench"):
        load(tmp_path, record.sweep_id)
    assert list_sweeps(tmp_path) == []


def test_old_job_directories_read_the_fields_the_readers_take(tmp_path):
    old = JobView.of(json.loads((_old_job(tmp_path, "") / "job.json").read_text()))
    assert old.spec is not None and old.spec["model"]["head_size"] == 64 and old.pid == 999999999
    assert (old.makes_neff, old.compiler_command, old.stages, old.weights, old.finished) == (None, {}, {}, {}, None)
