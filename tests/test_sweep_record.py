"""A sweep's record, its table, the memory limiter and what a missing Ray says: no job is run here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from neffbench.jobs import records
from neffbench.presets import load_preset
from neffbench.sweeps import SweepError, SweepNotFound, list_sweeps, load, plan, rows, run_sweep, table_lines
from neffbench.sweeps.limiter import MemoryLimiter, available_bytes
from neffbench.sweeps.procmem import GroupSampler, group_rss
from neffbench.sweeps.record import SweepRecord

SEED = load_preset("seed")
GiB = 2**30


def _record(tmp_path: Path, overs=("compiler.optlevel=1,2,5",)) -> SweepRecord:
    p = plan(SEED, list(overs), backend="cpu-check")
    return SweepRecord.create(tmp_path, p, {"executor": "local"})


def _fake_job(workdir: Path, name: str, **fields) -> str:
    job = workdir / name
    job.mkdir()
    record = {
        "job_id": name,
        "outcome": "succeeded",
        "backend": "neuron",
        "duration_s": 12.5,
        "metrics": {"compile_s": 10.25},
        "neffs": [{"path": "compiler/a.neff", "size": 2048}],
        "numerics": {"checked": True, "match": True, "max_abs_error": 1e-7, "max_rel_error": 1e-6},
        "bucket": {"num_tokens": 1},
        **fields,
    }
    (job / "job.json").write_text(json.dumps(record))
    return name


def test_the_record_lists_every_point_and_is_whole_after_every_change(tmp_path):
    record = _record(tmp_path)
    data = json.loads(record.path.read_text())
    assert record.path == tmp_path / "sweeps" / record.sweep_id / "sweep.json"
    assert [p["state"] for p in data["points"]] == ["pending", "pending", "invalid"]
    assert "Opt level must be between 1 and 3" in data["points"][2]["reason"]
    assert data["axes"] == [{"field": "compiler.optlevel", "values": [1, 2, 5], "texts": ["1", "2", "5"]}]
    assert data["versions"]["torch"] and data["pid"] == os.getpid()
    record.update_point(0, state="running", job_id="j0")
    assert json.loads(record.path.read_text())["points"][0]["state"] == "running"
    assert list(record.path.parent.glob(".*.tmp")) == []  # written whole, nothing left beside it
    again = _record(tmp_path)  # the same plan in the same second: its own id
    assert again.sweep_id != record.sweep_id


def test_a_sweep_whose_process_is_gone_reads_as_interrupted(tmp_path):
    record = _record(tmp_path)
    record.update_point(0, state="succeeded")
    record.update_point(1, state="running", job_id=_fake_job(tmp_path, "j1", outcome="failed", reason="boom"))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    record.update(pid=int(gone.stdout), pid_start="0")
    sweep = load(tmp_path, record.sweep_id)
    assert sweep["state"] == "interrupted" and "ended before it finished" in sweep["reason"]
    assert [p["state"] for p in sweep["points"]] == ["succeeded", "failed", "invalid"]
    assert json.loads(record.path.read_text())["state"] == "interrupted"  # fixed on disk for the next reader


def test_a_sweep_is_found_by_id_start_folder_or_file_and_a_wrong_one_says_what_there_is(tmp_path):
    record = _record(tmp_path)
    for ref in (record.sweep_id, record.sweep_id[:-4], record.path.parent, record.path):
        assert load(tmp_path, ref)["sweep_id"] == record.sweep_id
    with pytest.raises(SweepNotFound, match=f"Sweeps there: {record.sweep_id}"):
        load(tmp_path, "nosuch")
    assert [s["sweep_id"] for s in list_sweeps(tmp_path)] == [record.sweep_id]


def test_rows_read_each_job_and_the_table_shows_the_swept_values(tmp_path):
    record = _record(tmp_path, ["compiler.optlevel=1,2", "inputs.num_tokens=1,8"])
    job = _fake_job(tmp_path, "j0")
    runs = tmp_path / "j0" / "runs"
    runs.mkdir()
    (runs / "20260101T000000Z-cpu.json").write_text(
        json.dumps(
            {"outcome": "succeeded", "runtime": "cpu", "started": "x", "stats": {"p50_ms": 0.0451, "mean_ms": 0.05}}
        )
    )
    record.update_point(0, state="succeeded", job_id=job, peak_rss_bytes=300 * 2**20, node="node-a")
    record.update_point(1, state="failed", reason="its worker or node died", lost_attempts=[{"attempt": 1}])
    sweep = load(tmp_path, record.sweep_id)
    first, second, *_ = rows(sweep)
    assert (first["compile_s"], first["neff_bytes"], first["numerics"]["match"], first["latency"]["p50_ms"]) == (
        10.25,
        2048,
        True,
        0.0451,
    )
    assert second["outcome"] == "failed" and second["job_dir"] is None
    lines = table_lines(sweep)
    assert lines[0].split()[:3] == ["#", "optlevel", "num_tokens"] and "node" in lines[0]
    # Point 0 on disk is point 1 to the reader; the rows keep the stored index (old sweeps load as they were).
    assert lines[1].split()[:5] == ["1", "1", "1", "succeeded", "10.25"] and first["point"] == 0
    assert "300.0 MiB" in lines[1] and "2.0 KiB" in lines[1] and "0.045 cpu" in lines[1] and "node-a" in lines[1]
    assert lines[2].endswith("its worker or node died; 1 attempt(s) lost")
    assert lines[3].split()[3] == "pending"


def test_the_limiter_waits_for_memory_and_wakes_when_a_job_ends():
    free = {"bytes": 3 * GiB}
    limiter = MemoryLimiter(available=lambda: free["bytes"], margin_bytes=0)
    first = limiter.acquire(2 * GiB)
    notes: list[str] = []
    noted = threading.Event()
    got: list = []

    def on_note(note: str) -> None:
        notes.append(note)
        noted.set()

    waiter = threading.Thread(target=lambda: got.append(limiter.acquire(2 * GiB, on_note=on_note)))
    waiter.start()
    assert noted.wait(60)
    assert notes and notes[0].startswith("waiting for memory: needs 2.0 GiB; 3.0 GiB is available, of which 2.0 GiB")
    assert got == []
    limiter.release(first)
    waiter.join(60)
    assert got and got[0].need == 2 * GiB and notes[-1] == "memory is available now; starting"


def test_the_limiter_counts_what_a_running_job_already_holds_and_stops_waiting_on_cancel():
    held = {}
    limiter = MemoryLimiter(available=lambda: 3 * GiB, margin_bytes=0, usage=lambda pgid: held.get(pgid, 0))
    first = limiter.acquire(2 * GiB)
    first.pgid = 42
    held[42] = 2 * GiB  # it is at its peak: the 3 GiB available already exclude it
    assert limiter.acquire(2 * GiB, cancel_event=threading.Event()) is not None
    cancel = threading.Event()
    cancel.set()
    assert limiter.acquire(10 * GiB, cancel_event=cancel) is None


def test_a_job_larger_than_the_machine_starts_alone_with_a_note():
    notes: list[str] = []
    limiter = MemoryLimiter(available=lambda: GiB, margin_bytes=0)
    assert limiter.acquire(8 * GiB, on_note=notes.append) is not None
    assert notes[0].startswith("estimated 8.0 GiB, more than the 1.0 GiB available; starting it alone")


def test_memory_is_read_from_proc():
    assert available_bytes() > 0
    assert group_rss({os.getpgrp()})[os.getpgrp()] > 10 * 2**20
    sampler = GroupSampler(interval_s=0.01)
    sampler.watch(os.getpgrp())
    assert sampler.current(os.getpgrp()) > 0
    assert sampler.forget(os.getpgrp()) > 0
    sampler.close()


def test_the_ray_executor_without_ray_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    with pytest.raises(SweepError, match=r"install neffbench\[ray\]"):
        run_sweep(
            plan(SEED, ["compiler.optlevel=1"], backend="cpu-check"),
            executor="ray",
            backend="cpu-check",
            workdir=tmp_path,
        )
    assert not (tmp_path / "sweeps").exists()
    code = (
        "import sys; sys.modules['ray'] = None\nfrom neffbench.cli.main import main\n"
        f"sys.exit(main(['sweep', 'seed', '--over', 'compiler.optlevel=1', '--executor', 'ray', '--workdir', "
        f"{str(tmp_path / 'wd')!r}]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "install neffbench[ray]" in proc.stderr and "nothing was started" in proc.stderr


def test_options_for_another_executor_are_refused(tmp_path):
    p = plan(SEED, ["compiler.optlevel=1"], backend="cpu-check")
    with pytest.raises(SweepError, match="--address is for the ray executor"):
        run_sweep(p, address="auto", workdir=tmp_path)
    with pytest.raises(SweepError, match="none of the 1 point"):
        run_sweep(plan(SEED, ["compiler.optlevel=7"]), workdir=tmp_path)
    with pytest.raises(records.WorkdirError):
        (tmp_path / "file").write_text("x")
        run_sweep(p, workdir=tmp_path / "file")


def test_an_address_where_nothing_listens_is_said_at_once():
    import socket

    from neffbench.sweeps.ray_executor import unreachable

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert unreachable(f"127.0.0.1:{port}") is None and unreachable(f"ray://127.0.0.1:{port}") is None
    assert "nothing answers there (Connection refused" in unreachable(f"127.0.0.1:{port}")
    assert unreachable("auto") is None and unreachable(None) is None


def test_a_node_with_other_versions_is_reported_and_recorded(tmp_path):
    from neffbench.sweeps.tracker import Tracker
    from neffbench.sweeps.versions import tool_versions

    record = _record(tmp_path)
    lines: list[tuple] = []
    events: list[dict] = []
    tracker = Tracker(record, lambda p, t: lines.append((p, t)), events.append)
    node = {**tool_versions(), "neuronx_cc": "2.99.0", "torch_neuronx": None}
    tracker.node("node-b", node)
    tracker.node("node-b", node)  # its second task says nothing new
    data = json.loads(record.path.read_text())
    client = data["versions"]
    assert data["nodes"]["node-b"]["differs"] == {
        k: {"client": client[k], "node": node[k]} for k in ("torch_neuronx", "neuronx_cc") if client[k] != node[k]
    }
    assert "neuronx_cc" in data["nodes"]["node-b"]["differs"]
    assert [e["type"] for e in events] == ["sweep_node"]
    (line,) = lines
    assert line[0] is None and "node node-b has other versions than this machine: " in line[1]
    assert "neuronx_cc 2.99.0" in line[1]
