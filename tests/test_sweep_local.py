"""Sweeps on this machine: the command end to end, the cache, the fake toolchain, cancel and Ctrl-C, and the memory limiter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from neffbench.jobs.records import process_alive, read_record
from neffbench.presets import load_preset
from neffbench.sweeps import load, plan, rows, run_sweep
from neffbench.sweeps.limiter import MemoryLimiter
from neffbench.sweeps.local import LocalExecutor
from tests.fakes import fake_env
from tests.processes import fake_compiler_pids, until

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SEED = load_preset("seed")
GiB = 2**30


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neffbench", "sweep", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def test_sweep_runs_every_point_show_compares_them_and_a_rerun_serves_the_cache(tmp_path):
    wd = tmp_path / "wd"
    done = _cli(
        "seed",
        "--over",
        "compiler.optlevel=1,2",
        "--over",
        "inputs.num_tokens=1,8",
        "--backend",
        "cpu-check",
        "--jobs",
        "2",
        "--workdir",
        str(wd),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    swept = json.loads(done.stdout)
    assert swept["state"] == "succeeded" and swept["counts"] == {"succeeded": 4}
    assert [(r["values"]["compiler.optlevel"], r["bucket"]["num_tokens"]) for r in swept["rows"]] == [
        (1, 1),
        (1, 8),
        (2, 1),
        (2, 8),
    ]
    for row in swept["rows"]:
        assert row["outcome"] == "succeeded" and Path(row["job_dir"]).parent == wd.resolve()
        assert row["numerics"]["match"] and row["duration_s"] > 0 and row["backend"] == "cpu-check"
    assert "[1 optlevel=1 num_tokens=1]" in done.stderr  # the log, each line with its point, counted from 1
    sweep_json = Path(swept["path"])
    assert sweep_json == wd.resolve() / "sweeps" / swept["sweep_id"] / "sweep.json"
    assert {p["job_id"] for p in json.loads(sweep_json.read_text())["points"]} == {r["job_id"] for r in swept["rows"]}

    shown = _cli("show", swept["sweep_id"][:-3], "--workdir", str(wd))  # a unique start of the id will do
    assert shown.returncode == 0, shown.stderr
    table = shown.stdout.splitlines()
    header = next(line for line in table if line.startswith("#"))
    for column in ("optlevel", "num_tokens", "outcome", "compile s", "peak", "NEFF", "numerics", "p50 ms"):
        assert column in header
    assert sum(" succeeded " in line for line in table) == 4
    as_json = json.loads(_cli("show", swept["sweep_id"], "--workdir", str(wd), "--json").stdout)
    assert [r["job_id"] for r in as_json["rows"]] == [r["job_id"] for r in swept["rows"]]
    listed = _cli("show", "--workdir", str(wd))
    assert swept["sweep_id"] in listed.stdout

    rerun = _cli(
        "seed",
        "--over",
        "inputs.num_tokens=1,8,32",
        "--over",
        "compiler.optlevel=1",
        "--backend",
        "cpu-check",
        "--workdir",
        str(wd),
        "--json",
    )
    assert rerun.returncode == 0, rerun.stderr
    record = load(wd, json.loads(rerun.stdout)["sweep_id"])
    served = [(p["cached"], p["dispatched"]) for p in record["points"]]
    assert served == [(True, False), (True, False), (False, True)]
    for point in record["points"][:2]:
        job = read_record(wd / point["job_id"])
        assert job["cache"]["hit"] and job["worker_pid"] is None  # no worker ran


def test_invalid_points_are_listed_the_others_run_and_strict_starts_nothing(tmp_path):
    wd = tmp_path / "wd"
    mixed = _cli("seed", "--over", "compiler.optlevel=2,4", "--backend", "cpu-check", "--workdir", str(wd))
    assert mixed.returncode == 1, mixed.stderr
    assert (
        "point 2 (optlevel=4) is invalid: error: compiler.optlevel: Opt level must be between 1 and 3; got 4."
        in mixed.stdout
    )
    (sweep,) = [load(wd, p.parent.name) for p in (wd / "sweeps").glob("*/sweep.json")]
    assert [p["state"] for p in sweep["points"]] == ["succeeded", "invalid"]
    assert "Opt level must be between 1 and 3" in rows(sweep)[1]["problems"][0]["message"]

    strict = _cli("seed", "--over", "compiler.optlevel=2,4", "--strict", "--workdir", str(tmp_path / "strict"))
    assert strict.returncode == 2 and "nothing was started" in strict.stderr
    assert not (tmp_path / "strict").exists()
    typo = _cli("seed", "--over", "compiler.optlvl=1,2", "--workdir", str(tmp_path / "typo"))
    assert typo.returncode == 2 and "Did you mean 'compiler.optlevel'?" in typo.stderr
    dry = _cli(
        "seed",
        "--over",
        "inputs.num_tokens=[1,8]",
        "--over",
        "compiler.target=trn1,trn2",
        "--dry-run",
        "--workdir",
        str(tmp_path / "dry"),
    )
    assert dry.returncode == 0 and "4 valid" in dry.stdout and not (tmp_path / "dry").exists()


def test_fake_toolchain_points_make_neffs_side_by_side(tmp_path, monkeypatch):
    for key, value in fake_env("success").items():
        monkeypatch.setenv(key, value)
    result = run_sweep(
        plan(SEED, {"compiler.optlevel": [1, 3]}, backend="neuron", memory_per_job=GiB // 2),
        backend="neuron",
        jobs=2,
        workdir=tmp_path,
    )
    assert result.state == "succeeded"
    table = rows(load(None, result.path))
    assert [r["values"]["compiler.optlevel"] for r in table] == [1, 3]
    for row in table:
        assert row["backend"] == "neuron" and row["neff_bytes"] > 0 and row["compile_s"] > 0
        assert row["peak_rss_bytes"] is None or row["peak_rss_bytes"] > 0
        command = read_record(row["job_dir"])["compiler_command"]["actual"]
        assert (
            f"-O{row['values']['compiler.optlevel']}" in command
            or f"--optlevel={row['values']['compiler.optlevel']}" in " ".join(command)
        )


def test_cancel_stops_running_points_and_never_starts_the_rest(tmp_path, monkeypatch):
    pidfile = tmp_path / "pids.txt"
    for key, value in fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)).items():
        monkeypatch.setenv(key, value)
    cancel = threading.Event()
    workers: list[int] = []
    frontends: set[int] = set()

    def on_line(point, text: str) -> None:
        if "Running Frontend" in text:
            frontends.add(point)
            if len(frontends) == 2:
                cancel.set()

    def on_event(ev: dict) -> None:
        if ev["type"] == "started" and ev.get("pid"):
            workers.append(ev["pid"])

    result = run_sweep(
        plan(SEED, ["compiler.optlevel=1,2,3"], backend="neuron", memory_per_job=GiB // 2),
        backend="neuron",
        jobs=2,
        workdir=tmp_path,
        on_line=on_line,
        on_event=on_event,
        cancel_event=cancel,
    )
    assert result.state == "cancelled" and result.exit_code == 130
    points = result.record["points"]
    assert [p["state"] for p in points] == ["cancelled"] * 3
    assert points[2]["job_id"] is None and points[2]["reason"] == "cancelled before it started"
    pids = [*workers, *fake_compiler_pids(pidfile)]
    assert len(pids) == 6
    until(lambda: not any(process_alive(p) for p in pids), 10, "every job process to end")


def test_ctrl_c_cancels_the_sweep_and_records_it(tmp_path):
    pidfile = tmp_path / "pids.txt"
    env = {**fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neffbench",
            "sweep",
            "seed",
            "--over",
            "compiler.optlevel=1,2",
            "--backend",
            "neuron",
            "--memory-per-job",
            "0.5",
            "--workdir",
            str(tmp_path / "wd"),
        ],
        cwd=REPO,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        until(lambda: len(fake_compiler_pids(pidfile)) == 2, 60, "the first point's compiler")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    (path,) = (tmp_path / "wd" / "sweeps").glob("*/sweep.json")
    sweep = load(None, path)
    assert sweep["state"] == "cancelled"
    assert [p["state"] for p in sweep["points"]] == ["cancelled", "cancelled"]
    until(
        lambda: not any(process_alive(p) for p in fake_compiler_pids(pidfile)), 10, "the compiler and its child to end"
    )


def test_the_memory_limiter_holds_a_point_back_until_the_running_one_ends(tmp_path):
    # This machine "has" 1.5 GiB free and each point needs 1: two can never run at once.
    limiter = MemoryLimiter(available=lambda: int(1.5 * GiB), margin_bytes=0)
    events: list[dict] = []
    result = run_sweep(
        plan(SEED, ["inputs.num_tokens=1,8"], backend="cpu-check", memory_per_job=GiB),
        executor=LocalExecutor(2, limiter=limiter),
        backend="cpu-check",
        workdir=tmp_path,
        on_event=events.append,
    )
    assert result.state == "succeeded"
    changes = [(e["point"], e["state"]) for e in events if e["type"] == "sweep_point"]
    waited = next(p for p, state in changes if state == "waiting")
    other = 1 - waited
    assert changes.index((other, "succeeded")) < changes.index((waited, "running"))
    (held,) = [e for e in events if e["type"] == "sweep_point" and e["state"] == "waiting"]
    assert held["reason"].startswith("waiting for memory: needs 1.0 GiB; 1.5 GiB is available, of which 1.0 GiB")


def test_a_sweep_with_more_points_than_standbys_forks_them_from_a_server_of_its_own(tmp_path, monkeypatch):
    from neffbench.procs import WARM_ENV

    monkeypatch.delenv(WARM_ENV, raising=False)  # nobody has started one: the sweep does
    result = run_sweep(
        plan(SEED, {"compiler.optlevel": [1, 2, 3]}, backend="cpu-check", memory_per_job=GiB // 2),
        backend="cpu-check",
        workdir=tmp_path,
    )
    assert result.state == "succeeded"
    firsts = [(Path(row["job_dir"]) / "job.log").read_text().splitlines()[0] for row in rows(load(None, result.path))]
    assert len(firsts) == 3 and all("(forked by the warm-start server" in line for line in firsts), firsts
    assert WARM_ENV not in os.environ  # its server ended with the sweep
