"""Sweeps on Ray, on a one-node cluster this module starts: every job comes back, the cache skips dispatch, cancel and lost tasks.

The cluster has 2 CPUs (the machine's), so each test keeps to one or two points.
"""

from __future__ import annotations

import os
import platform
import signal
import threading
from pathlib import Path

import pytest

from neffbench.jobs.records import process_alive, read_record
from neffbench.presets import load_preset
from neffbench.sweeps import plan, rows, run_sweep
from neffbench.sweeps.ray_task import scratch_dir
from tests.fakes import WAIT_FOR_ENV, fake_env
from tests.processes import fake_compiler_pids, until

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

SEED = load_preset("seed")
GiB = 2**30


@pytest.fixture(scope="module")
def cluster():
    import gc
    import logging
    import warnings

    # Ray 2.9 drops the log monitor's file handle unclosed while it starts: Ray's ResourceWarning, not ours.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=80 * 2**20,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
        gc.collect()
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            ray.shutdown()
            gc.collect()


def _running_a_point() -> int:
    """The Ray worker running this module's one task: a process under this one (the cluster's), named as Ray names a
    worker while it runs a task. (The task's compile worker is not its child: the warm-start server forks it.)"""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[-1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(name))
    todo, found = [os.getpid()], []
    while todo:
        for pid in children.get(todo.pop(), ()):
            todo.append(pid)
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::run_point"):
                    found.append(pid)
            except OSError:
                continue
    (pid,) = found
    return pid


def test_every_job_comes_back_with_its_node_and_cached_points_are_not_dispatched(cluster, tmp_path):
    lines: list[tuple[int | None, str]] = []
    events: list[dict] = []
    result = run_sweep(
        plan(SEED, ["inputs.num_tokens=1,8"], backend="cpu-check"),
        executor="ray",
        backend="cpu-check",
        workdir=tmp_path,
        on_line=lambda p, t: lines.append((p, t)),
        on_event=events.append,
    )
    assert result.state == "succeeded" and result.exit_code == 0
    host = platform.node()
    for point in result.record["points"]:
        assert point["state"] == "succeeded" and point["dispatched"] and point["node"] == host
        job = read_record(tmp_path / point["job_id"])  # brought back into the client's workdir
        assert job["outcome"] == "succeeded" and job["host"] == host
        assert job["versions"]["torch"] == result.record["versions"]["torch"]  # what the node used
        assert not scratch_dir(result.sweep_id, point["index"]).exists()
    assert result.record["nodes"][host]["differs"] == {}
    # Lines streamed back while the tasks ran, each with its point.
    assert {p for p, t in lines if "traced in" in t} == {0, 1}
    states = [(e["point"], e["state"]) for e in events if e["type"] == "sweep_point"]
    assert (0, "running") in states and (1, "succeeded") in states
    assert any(e["type"] == "sweep_node" and e["node"] == host for e in events)
    assert events[-1]["type"] == "sweep_finished"
    assert [r["outcome"] for r in rows({**result.record, "path": str(result.path)})] == ["succeeded"] * 2

    again: list[dict] = []
    second = run_sweep(
        plan(SEED, ["inputs.num_tokens=8,16"], backend="cpu-check"),
        executor="ray",
        backend="cpu-check",
        workdir=tmp_path,
        on_event=again.append,
    )
    cached, fresh = second.record["points"]
    assert cached["cached"] and not cached["dispatched"] and cached["node"] is None
    assert fresh["dispatched"] and not fresh["cached"] and fresh["state"] == "succeeded"
    assert {e["node"] for e in again if e["type"] == "sweep_point" and e.get("node")} == {host}
    assert {e["point"] for e in again if e["type"] == "sweep_point" and e["state"] == "running" and e.get("node")} == {
        1
    }


def test_fake_toolchain_neff_comes_back_with_the_versions_used(cluster, tmp_path):
    env = fake_env("success")
    result = run_sweep(
        plan(SEED, ["compiler.optlevel=1"], backend="neuron", memory_per_job=GiB // 2),
        executor="ray",
        backend="neuron",
        workdir=tmp_path,
        runtime_env={"env_vars": env},
    )
    assert result.state == "succeeded", result.record["points"]
    (row,) = rows({**result.record, "path": str(result.path)})
    assert row["backend"] == "neuron" and row["neff_bytes"] > 0 and row["compile_s"] is not None
    job = read_record(row["job_dir"])
    assert job["versions"]["torch_neuronx"].endswith("+fake")  # the node's, not this process's (none here)
    assert (Path(row["job_dir"]) / job["neffs"][0]["path"]).is_file()
    node = result.record["nodes"][platform.node()]
    # The node's versions are read as its jobs' are, so they agree, local tags and all; the node has the
    # fake torch_neuronx (its runtime_env puts it on the path) and this process has none.
    assert {k: node["versions"][k] for k in ("torch", "torch_neuronx")} == {
        k: job["versions"][k] for k in ("torch", "torch_neuronx")
    }
    assert node["differs"] == {"torch_neuronx": {"client": None, "node": job["versions"]["torch_neuronx"]}}


def test_cancel_stops_every_task_and_leaves_no_process(cluster, tmp_path):
    pidfile = tmp_path / "pids.txt"
    env = fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile))
    cancel = threading.Event()
    workers: set[int] = set()
    frontends: set[int] = set()

    def on_event(ev: dict) -> None:
        if ev["type"] == "started" and ev.get("pid"):
            workers.add(ev["pid"])

    def on_line(point, text: str) -> None:
        if "Running Frontend" in text:
            frontends.add(point)
            if len(frontends) == 2:
                cancel.set()

    result = run_sweep(
        plan(SEED, ["compiler.optlevel=1,2"], backend="neuron", memory_per_job=GiB // 2),
        executor="ray",
        backend="neuron",
        workdir=tmp_path,
        runtime_env={"env_vars": env},
        on_line=on_line,
        on_event=on_event,
        cancel_event=cancel,
    )
    assert result.state == "cancelled" and result.exit_code == 130
    assert [p["state"] for p in result.record["points"]] == ["cancelled", "cancelled"]
    pids = [*workers, *fake_compiler_pids(pidfile)]
    assert len(pids) == 6  # two workers, two compilers, two grandchildren
    until(lambda: not any(process_alive(p) for p in pids), 60, "every job process to end")
    # Each job cancelled: left alone, the slow compiler would have run 300 s and failed.
    for point in result.record["points"]:
        assert read_record(tmp_path / point["job_id"])["outcome"] == "cancelled"


def test_a_killed_task_is_retried_once(cluster, tmp_path):
    gate = tmp_path / "compile-now"  # the first attempt's compiler waits for it: killed while it still compiles
    env = fake_env(**{WAIT_FOR_ENV: str(gate)})
    killed: list[int] = []

    def on_event(ev: dict) -> None:
        if ev["type"] == "started" and ev.get("pid") and not killed:
            killed.append(ev["pid"])
            os.kill(_running_a_point(), signal.SIGKILL)  # as a lost node would
            gate.touch()  # the retry compiles

    result = run_sweep(
        plan(SEED, ["inputs.num_tokens=1"], backend="neuron", memory_per_job=GiB // 2),
        executor="ray",
        backend="neuron",
        workdir=tmp_path,
        runtime_env={"env_vars": env},
        on_event=on_event,
    )
    (point,) = result.record["points"]
    assert result.state == "succeeded" and point["attempts"] == 2
    assert [a["attempt"] for a in point["lost_attempts"]] == [1]
    assert read_record(tmp_path / point["job_id"])["outcome"] == "succeeded"
    until(lambda: not process_alive(killed[0]), 60, "the lost attempt's worker to end with its parent")


def test_a_task_lost_twice_is_recorded_failed_with_the_reason(cluster, tmp_path):
    env = fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(tmp_path / "pids.txt"))
    killed: list[int] = []

    def on_event(ev: dict) -> None:
        if ev["type"] == "started" and ev.get("pid"):
            killed.append(ev["pid"])
            os.kill(_running_a_point(), signal.SIGKILL)

    result = run_sweep(
        plan(SEED, ["compiler.optlevel=1"], backend="neuron", memory_per_job=GiB // 2),
        executor="ray",
        backend="neuron",
        workdir=tmp_path,
        runtime_env={"env_vars": env},
        on_event=on_event,
    )
    (point,) = result.record["points"]
    assert result.state == "failed" and result.exit_code == 1
    assert point["state"] == "failed" and "died" in point["reason"] and "attempt 2" in point["reason"]
    assert [a["attempt"] for a in point["lost_attempts"]] == [1, 2]
    pids = [*killed, *fake_compiler_pids(tmp_path / "pids.txt")]
    until(lambda: not any(process_alive(p) for p in pids), 60, "every job process to end")


def test_with_a_shared_workdir_the_job_is_written_in_place(cluster, tmp_path):
    result = run_sweep(
        plan(SEED, ["inputs.num_tokens=4"], backend="cpu-check"),
        executor="ray",
        backend="cpu-check",
        workdir=tmp_path,
        shared_workdir=True,
    )
    (point,) = result.record["points"]
    assert result.state == "succeeded" and result.record["settings"]["shared_workdir"]
    job_dir = tmp_path / point["job_id"]
    assert read_record(job_dir)["outcome"] == "succeeded"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([job_dir.name, "sweeps"])  # no copy beside it
    assert not scratch_dir(result.sweep_id, 0).exists()
