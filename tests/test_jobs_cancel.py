"""Cancel, timeout and a crashed parent: the outcome is recorded and no process of the job survives."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neffbench.jobs import CompileJob, mark_interrupted, read_record
from neffbench.jobs.records import process_alive
from neffbench.presets import load_preset
from tests.fakes import fake_env, read_pidfile

pytestmark = pytest.mark.slow

SEED = load_preset("seed")
REPO = Path(__file__).resolve().parents[1]


def _job_pids(job_dir: Path, pidfile: Path) -> dict[str, int]:
    pids = read_pidfile(pidfile)
    pids["worker"] = read_record(job_dir)["worker_pid"]
    return pids


def _wait_until_gone(pids: dict[str, int], timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [name for name, pid in pids.items() if process_alive(pid)]
        if not alive:
            return []
        time.sleep(0.05)
    return alive


def _cleanup(job_dir: Path | None) -> None:
    """If a test failed half-way, stop what it started: the job's own process group."""
    if job_dir is None or not (job_dir / "job.json").exists():
        return
    rec = read_record(job_dir)
    if rec.get("worker_pid") and process_alive(rec["worker_pid"], rec.get("worker_pid_start")):
        os.killpg(rec["worker_pid"], signal.SIGKILL)


def _cancelling_runner(tmp_path, monkeypatch, **env) -> tuple[CompileJob, Path]:
    pidfile = tmp_path / "pids.txt"
    for key, value in fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile), **env).items():
        monkeypatch.setenv(key, value)
    holder: list[CompileJob] = []

    def on_line(line: str) -> None:
        # The fake compiler logs this after writing its own and its grandchild's pid.
        if "Running Frontend" in line:
            holder[0].cancel()

    runner = CompileJob(SEED, workdir=tmp_path / "work", on_line=on_line)
    holder.append(runner)
    return runner, pidfile


def test_cancel_stops_the_worker_the_compiler_and_its_child(tmp_path, monkeypatch):
    runner, pidfile = _cancelling_runner(tmp_path, monkeypatch)
    try:
        job_dir = runner.start()
        result = runner.wait()
        pids = _job_pids(job_dir, pidfile)
        assert set(pids) == {"worker", "compiler", "grandchild"}
        assert _wait_until_gone(pids) == []
        assert result.outcome == "cancelled" and result.reason == "cancelled during stage 'compiling'"
        rec = read_record(job_dir)
        # Ended by the cancel's SIGTERM: left alone, the slow compiler would have exited 3 after 300 s.
        assert rec["outcome"] == "cancelled" and rec["exit_code"] == -signal.SIGTERM
        assert (job_dir / "job.log").read_text().count("Running Frontend") == 1
        assert (job_dir / "compiler" / "model" / "graph.hlo").is_file()  # the partial directory is kept
        assert rec["stages"]["compiling"]["end"] is not None
    finally:
        _cleanup(runner.job_dir)


def test_processes_that_ignore_sigterm_get_sigkill_after_the_grace_period(tmp_path, monkeypatch):
    runner, pidfile = _cancelling_runner(tmp_path, monkeypatch, FAKE_NEURONX_CC_IGNORE_TERM="1")
    runner.grace_s = 0.5
    try:
        job_dir = runner.start()
        result = runner.wait()
        assert result.outcome == "cancelled"
        assert _wait_until_gone(_job_pids(job_dir, pidfile)) == []
        assert read_record(job_dir)["outcome"] == "cancelled"
    finally:
        _cleanup(runner.job_dir)


def test_timeout_from_the_spec_fails_the_job(tmp_path, monkeypatch):
    pidfile = tmp_path / "pids.txt"
    for key, value in fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)).items():
        monkeypatch.setenv(key, value)
    spec = dataclasses.replace(SEED, compiler=dataclasses.replace(SEED.compiler, timeout=2.0))
    runner = CompileJob(spec, workdir=tmp_path / "work")
    try:
        job_dir = runner.start()
        result = runner.wait()
        assert result.outcome == "failed"
        assert result.reason.startswith("timed out after 2 s during stage '")
        assert read_record(job_dir)["timeout_s"] == 2.0
        assert _wait_until_gone(_job_pids(job_dir, pidfile)) == []
    finally:
        _cleanup(runner.job_dir)


_CRASHING_PARENT = """
import os, signal, sys
from neffbench.jobs import CompileJob
from neffbench.presets import load_preset

def on_line(line):
    if "Running Frontend" in line:
        os.kill(os.getpid(), signal.SIGKILL)

runner = CompileJob(load_preset("seed"), workdir=sys.argv[1], on_line=on_line)
runner.start()
runner.wait()
"""


def test_a_crashed_parent_leaves_a_record_that_the_next_start_marks_interrupted(tmp_path, monkeypatch):
    pidfile = tmp_path / "pids.txt"
    for key, value in fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)).items():
        monkeypatch.setenv(key, value)
    workdir = tmp_path / "work"
    proc = subprocess.run(
        [sys.executable, "-c", _CRASHING_PARENT, str(workdir)],
        cwd=REPO,
        timeout=120,
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    [job_dir] = list(workdir.iterdir())
    try:
        rec = read_record(job_dir)
        assert rec["outcome"] == "running" and rec["stage"] == "compiling"
        assert mark_interrupted(workdir) == [job_dir]
        rec = read_record(job_dir)
        assert rec["outcome"] == "interrupted"
        assert "got as far as stage 'compiling'" in rec["reason"]
        assert "remaining processes were stopped" in rec["reason"]
        assert _wait_until_gone(_job_pids(job_dir, pidfile)) == []
    finally:
        _cleanup(job_dir)
