"""``neffbench compile`` end to end: real child processes, exit codes, summary, --json, buckets and Ctrl-C."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neffbench.jobs import read_record
from neffbench.jobs.records import process_alive
from tests.fakes import fake_env, read_pidfile

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TOOLCHAIN = shutil.which("neuronx-cc") is not None


def _cli(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "neffbench", "compile", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    """Several compiles at once (each is mostly a torch import in its worker)."""
    root = tmp_path_factory.mktemp("cli")
    plans = {
        "auto": (["seed", "--workdir", str(root / "auto")], None),
        "json": (["seed", "--workdir", str(root / "json"), "--backend", "cpu-check", "--json"], None),
        "invalid": (["seed", "--workdir", str(root / "invalid"), "--rotary-dim", "63"], None),
        "compile-error": (["seed", "--workdir", str(root / "error")], fake_env("compile-error")),
        "buckets": (
            ["seed", "--workdir", str(root / "buckets"), "--num-tokens", "1", "4", "--jobs", "2"],
            fake_env("success"),
        ),
    }
    procs = {name: _cli(args, env) for name, (args, env) in plans.items()}
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=180)
        out[name] = (proc.returncode, stdout, stderr, root / plans[name][0][2])
    return out


@pytest.mark.skipif(TOOLCHAIN, reason="auto picks the neuron backend on a host with neuronx-cc")
def test_auto_without_toolchain_runs_the_cpu_check_and_says_why(cli_runs):
    rc, stdout, stderr, workdir = cli_runs["auto"]
    assert rc == 0, stderr
    assert "neffbench: backend cpu-check: torch_neuronx and neuronx-cc not available" in stdout
    assert ": succeeded in " in stdout
    assert "no NEFF (cpu-check)" in stdout and "numerics on CPU" in stdout
    [job_dir] = list(workdir.iterdir())
    assert f"job: {job_dir}" in stdout
    assert read_record(job_dir)["makes_neff"] is False


def test_json_prints_the_final_records(cli_runs):
    rc, stdout, stderr, workdir = cli_runs["json"]
    assert rc == 0, stderr
    [record] = json.loads(stdout)
    [job_dir] = list(workdir.iterdir())
    assert record == read_record(job_dir)
    assert record["outcome"] == "succeeded" and record["backend"] == "cpu-check" and record["neffs"] == []
    assert "neffbench: backend cpu-check" in stderr


def test_invalid_spec_exits_2_and_starts_nothing(cli_runs):
    rc, stdout, stderr, workdir = cli_runs["invalid"]
    assert rc == 2
    assert "model.rotary_dim" in stderr and "nothing was started" in stderr
    assert not workdir.exists()


def test_compile_error_exits_1_with_the_first_error(cli_runs):
    rc, stdout, stderr, _ = cli_runs["compile-error"]
    assert rc == 1, stderr
    assert "FAILED" in stdout and "neuronx-cc failed with 1" in stdout
    assert "first error: [NLA001] Unhandled exception" in stdout
    assert "  > " in stdout and "compiler status FAIL, exit 1" in stdout
    assert "Root cause (stdout only)" in stdout


def test_buckets_end_with_a_table(cli_runs):
    rc, stdout, stderr, workdir = cli_runs["buckets"]
    assert rc == 0, stderr
    table = stdout[stdout.index("num_tokens  outcome") :].splitlines()
    assert table[1].split()[:2] == ["1", "succeeded"] and table[2].split()[:2] == ["4", "succeeded"]
    assert all("KiB" in row for row in table[1:3])
    assert "[num_tokens=4] " in stdout
    records = sorted((read_record(d) for d in workdir.iterdir()), key=lambda r: r["num_tokens"])
    assert [r["num_tokens"] for r in records] == [1, 4]
    assert all(len(r["neffs"]) == 1 for r in records)


def test_ctrl_c_cancels_and_exits_130(tmp_path):
    pidfile = tmp_path / "pids.txt"
    workdir = tmp_path / "work"
    proc = _cli(["seed", "--workdir", str(workdir)], fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)))
    try:
        deadline = time.monotonic() + 60
        while len(read_pidfile(pidfile)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(read_pidfile(pidfile)) == 2, proc.stderr.read() if proc.poll() is not None else "no pids"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "cancelling" in stdout and "CANCELLED" in stdout
    [job_dir] = list(workdir.iterdir())
    rec = read_record(job_dir)
    assert rec["outcome"] == "cancelled"
    pids = {**read_pidfile(pidfile), "worker": rec["worker_pid"]}
    deadline = time.monotonic() + 60
    while any(process_alive(p) for p in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [name for name, pid in pids.items() if process_alive(pid)]
