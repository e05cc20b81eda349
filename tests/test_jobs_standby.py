"""The standby worker: handed a job, it runs it as a spawned worker would; no standby outlives its owner."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from neffbench.jobs import CompileJob, run_buckets
from neffbench.jobs.records import process_alive, process_start_time
from neffbench.jobs.standby import StandbyWorker, spawn_worker
from neffbench.presets import load_preset
from neffbench.procs import collect

pytestmark = pytest.mark.slow

SEED = load_preset("seed")
REPO = Path(__file__).resolve().parents[1]
STANDBY_LINE = "(a standby, started before the job)"
# Differ from one run to the next whoever starts the worker.
VOLATILE = {"job_id", "created", "finished", "duration_s", "pid", "pid_start", "worker_pid", "worker_pid_start"}


def _standby_children() -> set[int]:
    """Pids of this process's children running ``neffbench.workers.compile --standby`` (zombies included)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[-1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # it ended while we looked
        if ppid == os.getpid() and b"neffbench.workers.compile" in cmdline and b"--standby" in cmdline:
            found.add(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    """Whether our child ``pid`` has been reaped and its process group is empty."""
    for probe in (os.kill, os.killpg):
        try:
            probe(pid, 0)
        except ProcessLookupError:
            continue
        return False
    return True


def _wait_until(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _normalized(record: dict) -> dict:
    out = {k: v for k, v in record.items() if k not in VOLATILE}
    out["stages"] = list(record["stages"])
    out["metrics"] = sorted(record["metrics"])
    out["model_pt"] = {k: v for k, v in record["model_pt"].items() if k != "sha256"}
    return out


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory):
    """The seed job run by a handed-over standby, and by a spawned worker (its standby had another backend)."""
    workdir = tmp_path_factory.mktemp("standby")
    handed = StandbyWorker("cpu-check")
    handed_start = process_start_time(handed.pid)
    unused = StandbyWorker("auto")
    lines: list[str] = []
    via_standby = CompileJob(SEED, workdir=workdir, backend="cpu-check", standby=handed, on_line=lines.append)
    spawned = CompileJob(SEED, workdir=workdir, backend="cpu-check", standby=unused)
    try:
        via_standby.start()
        spawned.start()
        results = via_standby.wait(), spawned.wait()
    finally:
        handed.discard()
        unused.discard()
    return results, lines, handed, handed_start, unused


def test_a_handed_over_standby_runs_the_job_as_a_spawned_worker_would(two_jobs):
    (via_standby, spawned), lines, handed, handed_start, _ = two_jobs
    assert (via_standby.outcome, via_standby.exit_code) == ("succeeded", 0)
    assert (spawned.outcome, spawned.exit_code) == ("succeeded", 0)
    rec = via_standby.record
    assert (rec["worker_pid"], rec["worker_pid_start"]) == (handed.pid, handed_start)
    assert any(STANDBY_LINE in line for line in lines)
    assert not any(STANDBY_LINE in line for line in (spawned.job_dir / "job.log").read_text().splitlines())
    assert _normalized(rec) == _normalized(spawned.record)
    assert (via_standby.job_dir / "model.pt").is_file() and (via_standby.job_dir / "reproduce.py").is_file()


def test_after_the_job_the_standby_is_reaped_and_belongs_to_nobody(two_jobs):
    _, _, handed, _, unused = two_jobs
    assert _gone(handed.pid)
    assert handed.hand_over("/nowhere") is None  # it was handed over once; discard() did nothing
    # The standby of another backend was discarded, and the job spawned a worker of its own.
    assert _gone(unused.pid)
    assert two_jobs[0][1].record["worker_pid"] != unused.pid


def test_discard_kills_and_reaps_it_at_once_and_twice_is_harmless(monkeypatch):
    standby = StandbyWorker("cpu-check")
    pid = standby.pid
    assert not _gone(pid)
    sent: list[tuple[int, int]] = []
    killpg = os.killpg
    monkeypatch.setattr(os, "killpg", lambda pgid, sig: (sent.append((pgid, sig)), killpg(pgid, sig))[1])
    standby.discard()
    # At once: SIGKILL first, no SIGTERM and grace period to wait out; reaped before discard returns.
    assert sent and sent[0] == (pid, signal.SIGKILL) and (pid, signal.SIGTERM) not in sent
    assert _gone(pid)
    standby.discard()
    assert standby.hand_over("/nowhere") is None


def test_a_standby_that_died_is_not_handed_the_job():
    standby = StandbyWorker("cpu-check")
    try:
        os.kill(standby.pid, signal.SIGKILL)
        # Until it is a zombie, a hand-over could still reach its pipe.
        assert _wait_until(lambda: not process_alive(standby.pid))
        assert standby.hand_over("/nowhere") is None
        assert _gone(standby.pid)
    finally:
        standby.discard()


def test_a_standby_whose_stdin_closes_without_a_job_exits_0_silently():
    child = spawn_worker("cpu-check", cwd="/")
    try:
        child.close_stdin()  # at once, then its output is read to EOF
        output, _ = collect(child, timeout=120)
        returncode = child.reap()
    finally:
        child.kill_and_reap()  # does nothing once it is reaped
    assert returncode == 0, output
    assert b"neffbench" not in output and b"Traceback" not in output


_DYING_PARENT = """
import os
from neffbench.jobs.standby import StandbyWorker

print(StandbyWorker("cpu-check").pid, flush=True)
os._exit(0)
"""


def test_a_standby_whose_parent_dies_exits_by_itself():
    proc = subprocess.run(
        [sys.executable, "-c", _DYING_PARENT], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(proc.stdout)
    start = process_start_time(pid)
    try:
        assert _wait_until(lambda: not process_alive(pid, start), timeout=120)
    finally:
        if process_alive(pid, start):
            os.killpg(pid, signal.SIGKILL)


# Runs the CLI and then says, from inside its process, whether each standby it started was reaped
# (still its child, running or a zombie, means it leaked): no race with the standby's own exit.
_RECORDING_CLI = """
import os, sys
from neffbench.cli.main import main
from neffbench.jobs.standby import StandbyWorker

pids = []
original = StandbyWorker.__init__

def recording(self, *args, **kwargs):
    original(self, *args, **kwargs)
    pids.append(self.pid)

StandbyWorker.__init__ = recording
code = main(sys.argv[1:])
for pid in pids:
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        print(f"standby {pid} leaked")
    except ChildProcessError:
        print(f"standby {pid} reaped")
sys.exit(code)
"""


@pytest.mark.parametrize("bad", [["--rotary-dim", "63"], ["--jobs", "0"]], ids=["invalid-spec", "bad-jobs"])
def test_an_early_return_of_the_cli_leaves_no_worker(tmp_path, bad):
    workdir = tmp_path / "work"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _RECORDING_CLI,
            "compile",
            "seed",
            "--backend",
            "cpu-check",
            "--workdir",
            str(workdir),
            *bad,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stdout.splitlines()
    assert line.endswith(" reaped"), line
    assert not process_alive(int(line.split()[1]))
    assert not workdir.exists()


@pytest.mark.cold_workers
def test_sequential_buckets_start_the_next_worker_while_the_previous_job_runs(tmp_path):
    spec = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(1, 2)))
    alive_when_first_finished: set[int] = set()

    def on_event(ev: dict) -> None:
        if ev["type"] == "finished" and ev["num_tokens"] == 1:
            alive_when_first_finished.update(_standby_children())

    first = StandbyWorker("cpu-check")
    results = run_buckets(spec, workdir=tmp_path, backend="cpu-check", on_event=on_event, standby=first)
    assert [r.outcome for r in results] == ["succeeded", "succeeded"]
    assert results[0].record["worker_pid"] == first.pid
    # The second job's worker already existed (a standby) when the first job finished.
    assert results[1].record["worker_pid"] in alive_when_first_finished
    assert STANDBY_LINE in (results[1].job_dir / "job.log").read_text()
    assert _standby_children() == set()


def test_cancelled_buckets_discard_the_standby_and_start_no_other(tmp_path):
    spec = dataclasses.replace(SEED, inputs=dataclasses.replace(SEED.inputs, num_tokens=(1, 2)))
    cancel = threading.Event()
    cancel.set()
    standby = StandbyWorker("cpu-check")
    results = run_buckets(spec, workdir=tmp_path, backend="cpu-check", cancel_event=cancel, standby=standby)
    assert [(r.outcome, r.reason) for r in results] == [("cancelled", "cancelled before it started")] * 2
    assert _gone(standby.pid)
    assert _standby_children() == set()


@pytest.mark.slow
@pytest.mark.cold_workers
def test_a_compile_of_the_users_code_imports_torch_in_one_process(tmp_path):
    """What the build reads is asked of the standby worker before its job, not of a probe child of its own."""
    import os
    import shutil

    from tests.cli import neffbench

    shutil.copy(Path(__file__).parent / "data" / "modules" / "mlp.py", tmp_path / "mlp.py")
    log = tmp_path / "torch-imports.txt"
    here = Path(__file__).parent / "data" / "torch_imports"
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(here), os.environ.get("PYTHONPATH")) if p),
        "NEFFBENCH_TEST_TORCH_IMPORTS": str(log),
    }
    done = neffbench(
        "compile",
        "mlp.py:make_mlp",
        "--input",
        "x:f32[8,64]",
        "--backend",
        "cpu-check",
        "--workdir",
        "wd",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    importers = log.read_text().splitlines()
    assert len(importers) == 1 and "--standby" in importers[0], importers
    (record,) = [p for p in (tmp_path / "wd").glob("*/job.json")]
    assert "mlp.py" in record.read_text()  # the job's own build still records the file it read
