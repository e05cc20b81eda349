"""Jobs outlive nothing: a parent killed with SIGKILL (the CLI, the window, a run) takes every process of its
job with it (within 5 s: make bench times that); the next start marks the job interrupted; compiles sharing a
workdir never collide; a workdir that cannot be made, a file-size limit or a full disk is one sentence naming
the path and the cause, with job.json always whole; and a crash-consistency loop of many random SIGKILLs leaves
only parseable, final records, no temporary file and no process.

Every process a test starts carries ``NEFFBENCH_SURVIVE_TAG=<a fresh uuid>`` in its environment, and so
does everything those processes start (worker, compiler, its grandchild, run child): "no process left" is
checked by scanning ``/proc/*/environ`` for the tag, besides the pids the job records and the pidfile name.
The same tag is what the teardown uses to stop anything a failed test left behind, so it never touches a
process it did not start.

The crash loop's kill count is ``NEFFBENCH_KILLS`` (default :data:`DEFAULT_KILLS`, also in CI), its seed
``NEFFBENCH_KILL_SEED``; ``tests/bench/bench_survive.py`` runs it with more kills.
"""

from __future__ import annotations

import ast
import collections
import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from neffbench.jobs import records
from neffbench.jobs.records import FINAL_OUTCOMES, process_alive, process_start_time
from tests.fakes import fake_env, read_pidfile

# Cold workers: these tests find every process a test started by a tag in its environment, as the kernel recorded it
# when the process began; a worker forked by the warm-start server began as the server (tests/test_procs_warm.py
# covers a forked worker's end when its parent dies).
pytestmark = [pytest.mark.slow, pytest.mark.cold_workers]

REPO = Path(__file__).resolve().parents[1]
WINDOW_SCRIPT = REPO / "tests" / "survive" / "window_compile.py"
TAG_ENV = "NEFFBENCH_SURVIVE_TAG"
GONE_WITHIN_S = 5.0  # what is promised after the parent's death: make bench measures it (tests/bench/bench_survive.py)
# What the tests wait: ample on a loaded machine, and still far less than the 300 s the slow fake compiler and its
# grandchild live by themselves, so processes gone within it went because their parent died.
TAKEN_WITHIN_S = 60.0
START_TIMEOUT_S = 180.0  # a worker's torch import on a loaded 2-core machine
KILLS_ENV, SEED_ENV = "NEFFBENCH_KILLS", "NEFFBENCH_KILL_SEED"
# A few seconds on this 2-core machine, two kills at a time (the same in CI): each kill is a Python start that
# may import torch. make bench runs 200, and NEFFBENCH_KILLS (KILLS_ENV) any other count.
DEFAULT_KILLS = 12
DEFAULT_SEED = 20261201
MAX_KILL_DELAY_S = 2.5
INTERRUPTED_LINE = "was left running by a process that is gone: marked interrupted"


# ---- processes ---------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(ppid, state, start time) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return int(fields[1]), fields[0], fields[19]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def descendants(root: int) -> dict[int, str]:
    """Every live (non-zombie) descendant of ``root``: pid -> kernel start time."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    starts: dict[int, str] = {}
    for pid in _pids():
        st = _stat(pid)
        if st is not None and st[1] != "Z":
            children[st[0]].append(pid)
            starts[pid] = st[2]
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found[child] = starts[child]
                todo.append(child)
    return found


def tagged(tag: str) -> dict[int, str]:
    """Every live process whose environment carries this test's tag (so: started by it): pid -> start time."""
    needle = f"{TAG_ENV}={tag}".encode()
    found: dict[int, str] = {}
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            st = _stat(pid)
            if st is not None and st[1] != "Z":
                found[pid] = st[2]
    return found


def alive(procs: dict[int, str | None]) -> dict[int, str | None]:
    return {pid: start for pid, start in procs.items() if process_alive(pid, start)}


def wait_gone(
    procs: dict[int, str | None], tag: str | None = None, timeout: float = TAKEN_WITHIN_S, poll: float = 0.01
) -> dict[int, str | None]:
    """What is still alive after ``timeout``: of ``procs``, and of the processes carrying ``tag``."""
    deadline = time.monotonic() + timeout
    while True:
        left = alive(procs)
        if not left and tag is not None:
            left = tagged(tag)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(poll)


def describe(procs: dict[int, Any]) -> str:
    out = []
    for pid in procs:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmd = "(gone)"
        out.append(f"{pid}: {cmd[:200]}")
    return "\n".join(out) or "(none)"


def stop_tagged(tag: str) -> dict[int, str]:
    """SIGKILL whatever is left of this test's own processes (found by their tag); returns what it stopped."""
    left = tagged(tag)
    for pid, start in left.items():
        if process_alive(pid, start):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return left


@pytest.fixture
def tag():
    """A fresh tag for the test's processes; anything carrying it at teardown is stopped (and the test fails)."""
    value = uuid.uuid4().hex
    yield value
    left = stop_tagged(value)
    assert not left, f"processes of this test were still running at teardown:\n{describe(left)}"


# ---- starting the CLI and waiting --------------------------------------------------------------------------


def job_env(tag: str, scenario: str = "success", **extra: str) -> dict[str, str]:
    return {**os.environ, **fake_env(scenario, **extra), TAG_ENV: tag, "PYTHONWARNINGS": "ignore"}


def neffbench_cmd(*args: str | os.PathLike[str]) -> list[str]:
    return [sys.executable, "-m", "neffbench", *map(str, args)]


def spawn(cmd: list[str], env: dict[str, str], log: Path | None) -> subprocess.Popen:
    """A process with its output in ``log`` (a file never fills up and blocks it, as a pipe could)."""
    if log is None:
        return subprocess.Popen(
            cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)


def tail(log: Path | None, n: int = 3000) -> str:
    if log is None or not log.exists():
        return ""
    return log.read_text(encoding="utf-8", errors="replace")[-n:]


def wait_for(
    cond: Callable[[], Any],
    timeout: float,
    what: str,
    *,
    proc: subprocess.Popen | None = None,
    log: Path | None = None,
    poll: float = 0.02,
) -> Any:
    """Poll ``cond`` until it is truthy (returned); fail when the deadline passes or ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            value = cond()
            if value:
                return value
            raise AssertionError(f"{what}: the process exited with {proc.returncode} first\n{tail(log)}")
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{tail(log)}")
        time.sleep(poll)


def reap(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def neffbench_list(workdir: Path, tag: str, *extra: str) -> subprocess.CompletedProcess:
    """The "next start": ``neffbench list W``."""
    return subprocess.run(
        neffbench_cmd("list", workdir, *extra), cwd=REPO, env=job_env(tag), capture_output=True, text=True, timeout=120
    )


def job_dirs(workdir: Path) -> list[Path]:
    return sorted(d for d in workdir.iterdir() if d.is_dir()) if workdir.is_dir() else []


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def temporary_files(root: Path) -> list[Path]:
    """What a writer leaves when it dies between creating and renaming: ``.NAME....tmp``, and the workdir's
    write probe ``.neffbench-write-test-PID``."""
    return sorted(
        p
        for p in root.rglob(".*")
        if p.is_file() and (p.name.endswith(".tmp") or p.name.startswith(".neffbench-write-test-"))
    )


# ---- (a) the CLI killed in the middle of a compile -----------------------------------------------------------


@dataclass
class KillReport:
    """One SIGKILL of a ``neffbench compile`` parent in the middle of a slow compile."""

    job_dir: Path
    job: dict[str, tuple[int, str | None]]  # worker, compiler, grandchild: (pid, start time)
    tree: dict[int, str]  # every descendant of the CLI just before the kill
    gone_s: float | None  # from the SIGKILL until the job's three processes were gone; None: not within the limit
    left: dict[int, str | None]  # what was still alive after the limit (the tree, the job, the tag)


def kill_mid_compile(
    workdir: Path, tag: str, pidfile: Path, log: Path, *, limit: float = TAKEN_WITHIN_S, poll: float = 0.01
) -> KillReport:
    """Start ``neffbench compile seed`` with the slow fake compiler, SIGKILL the CLI once the compiler and its
    grandchild run, and time how long the job's processes take to go (polled every ``poll`` s)."""
    proc = spawn(
        neffbench_cmd("compile", "seed", "--workdir", workdir),
        job_env(tag, "slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)),
        log,
    )
    try:
        pids = wait_for(
            lambda: len(read_pidfile(pidfile)) == 2 and read_pidfile(pidfile),
            START_TIMEOUT_S,
            "the fake compiler's pidfile",
            proc=proc,
            log=log,
        )
        [job_dir] = job_dirs(workdir)
        record = wait_for(
            # The compiler can start before job.json says the job reached it (a loaded machine): wait for both.
            lambda: (r := _record_or_none(job_dir)) and r.get("worker_pid") and r.get("stage") == "compiling" and r,
            30,
            "the worker pid and the stage 'compiling' in job.json",
            proc=proc,
            log=log,
        )
        job = {
            "worker": (record["worker_pid"], record["worker_pid_start"]),
            **{name: (pid, process_start_time(pid)) for name, pid in pids.items()},
        }
        tree = descendants(proc.pid)
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        while True:
            if not any(process_alive(pid, start) for pid, start in job.values()):
                gone_s: float | None = time.monotonic() - t0
                break
            if time.monotonic() - t0 > limit:
                gone_s = None
                break
            time.sleep(poll)
        proc.wait()
        left = wait_gone({**tree, **dict(job.values())}, tag, timeout=max(0.0, limit - (time.monotonic() - t0)))
        return KillReport(job_dir, job, tree, gone_s, left)
    finally:
        reap(proc)


def _record_or_none(job_dir: Path) -> dict[str, Any] | None:
    try:
        return read_json(job_dir / records.RECORD_NAME)
    except (OSError, ValueError):
        return None


def assert_marked_interrupted(workdir: Path, job_dir: Path, tag: str, stage: str | None = None) -> dict[str, Any]:
    listing = neffbench_list(workdir, tag)
    assert listing.returncode == 0, listing.stderr
    assert f"neffbench: {job_dir.name} {INTERRUPTED_LINE}" in listing.stderr, listing.stderr
    record = read_json(job_dir / records.RECORD_NAME)
    assert record["outcome"] == "interrupted"
    assert record["reason"].startswith(f"the process that ran this job (pid {record['pid']}) ended before finishing")
    if stage is not None:
        assert f"it got as far as stage '{stage}'" in record["reason"]
    assert record["finished"] is not None
    again = neffbench_list(workdir, tag)  # marked once: the next start has nothing more to say
    assert again.returncode == 0 and INTERRUPTED_LINE not in again.stderr, again.stderr
    assert temporary_files(workdir) == []
    return record


def test_a_sigkilled_compile_cli_takes_the_worker_the_compiler_and_its_child(tmp_path, tag):
    workdir = tmp_path / "work"
    report = kill_mid_compile(workdir, tag, tmp_path / "pids.txt", tmp_path / "cli.log")
    assert set(report.job) == {"worker", "compiler", "grandchild"}
    assert report.job["worker"][0] in report.tree and report.job["compiler"][0] in report.tree
    assert report.gone_s is not None, (
        f"still alive {TAKEN_WITHIN_S} s after the SIGKILL:\n{describe(alive(dict(report.job.values())))}"
    )
    assert report.left == {}, f"still alive {TAKEN_WITHIN_S} s after the SIGKILL:\n{describe(report.left)}"
    # (d) the next start says what happened, and job.json says so too.
    assert_marked_interrupted(workdir, report.job_dir, tag, stage="compiling")


# ---- (b) the window killed in the middle of a compile ---------------------------------------------------------


@pytest.mark.gui
def test_a_sigkilled_window_takes_its_jobs_processes_with_it(tmp_path, tag):
    from neffbench.jobs.workdir_jobs import scan

    workdir, pidfile, log = tmp_path / "work", tmp_path / "pids.txt", tmp_path / "window.log"
    env = job_env(tag, "slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile), QT_QPA_PLATFORM="offscreen")
    window = spawn([sys.executable, str(WINDOW_SCRIPT), str(workdir), str(tmp_path / "settings.ini")], env, log)
    try:
        pids = wait_for(
            lambda: len(read_pidfile(pidfile)) == 2 and read_pidfile(pidfile),
            START_TIMEOUT_S,
            "the fake compiler's pidfile",
            proc=window,
            log=log,
        )
        assert "compile started" in tail(log)
        [job_dir] = job_dirs(workdir)
        record = wait_for(
            # The compiler can start before job.json says the job reached it (a loaded machine): wait for both.
            lambda: (r := _record_or_none(job_dir)) and r.get("worker_pid") and r.get("stage") == "compiling" and r,
            30,
            "the worker pid and the stage 'compiling' in job.json",
            proc=window,
            log=log,
        )
        assert record["pid"] == window.pid
        job = {
            record["worker_pid"]: record["worker_pid_start"],
            **{pid: process_start_time(pid) for pid in pids.values()},
        }
        tree = descendants(window.pid)
        assert set(job) <= set(tree), describe(tree)
        t0 = time.monotonic()
        os.kill(window.pid, signal.SIGKILL)
        window.wait()
        left = wait_gone({**tree, **job}, tag, timeout=TAKEN_WITHIN_S - (time.monotonic() - t0))
        assert left == {}, f"still alive {TAKEN_WITHIN_S} s after the window's SIGKILL:\n{describe(left)}"
    finally:
        reap(window)
    # The window's own scan (the Artifacts tab) marks the job too, and so does the CLI's list.
    [row] = [a for a in scan(workdir) if a.job_dir == job_dir]
    assert row.job is not None and row.job.outcome == "interrupted"
    assert "it got as far as stage 'compiling'" in (row.job.reason or "")
    assert read_json(job_dir / records.RECORD_NAME)["outcome"] == "interrupted"
    assert temporary_files(workdir) == []


# ---- (c) neffbench run killed in the middle of its timing loop --------------------------------------------


def test_a_sigkilled_run_cli_takes_the_run_child_with_it(seed_cpu_check_job, tmp_path, tag):
    job_dir, log = seed_cpu_check_job, tmp_path / "run.log"
    workdir = job_dir.parent
    proc = spawn(neffbench_cmd("run", job_dir, "--runtime", "cpu", "--iterations", "100000000"), job_env(tag), log)
    try:
        # The child names itself first, and checks the outputs before it starts timing.
        child = int(
            wait_for(
                lambda: re.search(r"run child pid (\d+)", tail(log, 10**6)),
                START_TIMEOUT_S,
                "the run child's pid",
                proc=proc,
                log=log,
            )[1]
        )
        wait_for(
            lambda: "outputs against reference.npz" in tail(log, 10**6),
            START_TIMEOUT_S,
            "the run to reach its timing loop",
            proc=proc,
            log=log,
        )
        tree = descendants(proc.pid)
        assert child in tree, describe(tree)
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = wait_gone(tree, tag, timeout=TAKEN_WITHIN_S - (time.monotonic() - t0))
        assert left == {}, f"still alive {TAKEN_WITHIN_S} s after the run CLI's SIGKILL:\n{describe(left)}"
    finally:
        reap(proc)
    # The run record is whole JSON and nothing half-written is beside it; the job it ran stays succeeded.
    [run_record] = list((job_dir / "runs").glob("*.json"))
    assert read_json(run_record)["job_id"] == job_dir.name
    listing = neffbench_list(workdir, tag)
    assert listing.returncode == 0 and INTERRUPTED_LINE not in listing.stderr, listing.stderr
    assert read_json(job_dir / records.RECORD_NAME)["outcome"] == "succeeded"
    assert temporary_files(workdir) == []


# ---- (d) a job killed after its NEFF was written -------------------------------------------------------------


def test_a_job_killed_after_its_neff_was_written_keeps_the_neff_listed_as_interrupted(tmp_path, tag):
    workdir, log = tmp_path / "work", tmp_path / "cli.log"
    proc = spawn(neffbench_cmd("compile", "seed", "--workdir", workdir), job_env(tag, "success"), log)
    try:
        # The compiler has written its NEFF and said so; the worker still has saving and verifying to do.
        wait_for(
            lambda: "Compiler status PASS" in tail(log, 10**6),
            START_TIMEOUT_S,
            "the compiler's PASS",
            proc=proc,
            log=log,
            poll=0.005,
        )
        tree = descendants(proc.pid)
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = wait_gone(tree, tag, timeout=TAKEN_WITHIN_S - (time.monotonic() - t0))
        assert left == {}, describe(left)
    finally:
        reap(proc)
    [job_dir] = job_dirs(workdir)
    assert read_json(job_dir / records.RECORD_NAME)["outcome"] == "running", "the job finished before the kill"
    [neff] = list(job_dir.glob("compiler/**/*.neff"))
    record = assert_marked_interrupted(workdir, job_dir, tag)
    assert [n["path"] for n in record["neffs"]] == [neff.relative_to(job_dir).as_posix()]

    listing = neffbench_list(workdir, tag, "--json")
    assert listing.returncode == 0, listing.stderr
    [row] = json.loads(listing.stdout)
    assert Path(row["abs_path"]) == neff.resolve() and row["error"] is None, row
    assert row["job"]["job_id"] == job_dir.name and row["job"]["outcome"] == "interrupted"
    assert row["sha256"] == record["neffs"][0]["sha256"] and row["warnings"] == []
    table = neffbench_list(workdir, tag)
    assert "interrupted" in table.stdout and neff.name in table.stdout


# ---- compiles sharing a workdir ---------------------------------------------------------------------------


def make_half_created(workdir: Path) -> dict[str, bytes | None]:
    """Job directories as a compile killed half-way (or still starting) leaves them: name -> job.json bytes."""
    from tests.neff_factory import build_neff

    workdir.mkdir(parents=True, exist_ok=True)
    made: dict[str, bytes | None] = {}
    (workdir / "half-empty").mkdir()
    made["half-empty"] = None
    (workdir / "half-spec-only").mkdir()
    (workdir / "half-spec-only" / "spec.toml").write_text('name = "half"\n', encoding="utf-8")
    made["half-spec-only"] = None
    for name, text in {
        "half-empty-json": b"",
        "half-truncated": b'{"schema_version": 1, "outcome": "running", "pid',
        "half-not-an-object": b'"running"\n',
        "half-truncated-list": b"[1, 2",
    }.items():
        (workdir / name).mkdir()
        (workdir / name / "job.json").write_bytes(text)
        made[name] = text
    # A NEFF beside a truncated record: listed, with the record's problem.
    build_neff(
        workdir / "half-truncated" / "compiler" / "graph.neff",
        inputs={"x": ("float32", (1, 4))},
        outputs={"y": ("float32", (1, 4))},
    )
    return made


def assert_index_tolerates(workdir: Path, tag: str) -> list[dict[str, Any]]:
    from neffbench.jobs.workdir_jobs import scan
    from neffbench.views.workdir import scan_workdir

    listing = neffbench_list(workdir, tag, "--json")
    assert listing.returncode == 0, listing.stderr
    assert "Traceback" not in listing.stderr, listing.stderr
    rows = json.loads(listing.stdout)
    table = neffbench_list(workdir, tag)
    assert table.returncode == 0 and "Traceback" not in table.stderr, table.stderr
    scanned = scan_workdir(workdir)
    assert sorted(r.rel_path for r in scanned) == sorted(r["path"] for r in rows)
    scan(workdir)  # the window's scan, which marks interrupted jobs first
    return rows


def test_the_index_tolerates_half_created_job_directories(tmp_path, tag):
    workdir = tmp_path / "work"
    made = make_half_created(workdir)
    rows = assert_index_tolerates(workdir, tag)
    [row] = rows
    assert row["path"] == "half-truncated/compiler/graph.neff" and row["error"] is None
    assert row["job"] is None and row["job_error"], row
    assert records.mark_interrupted(workdir) == []
    for name, text in made.items():  # nobody "repaired" or removed what it could not read
        if text is not None:
            assert (workdir / name / "job.json").read_bytes() == text


def test_three_clis_compiling_into_one_workdir_at_once_never_collide(tmp_path, tag):
    workdir = tmp_path / "work"
    made = make_half_created(workdir)
    logs = [tmp_path / f"cli-{i}.log" for i in range(3)]
    cmd = neffbench_cmd("compile", "seed", "--num-tokens", "1", "2", "--backend", "cpu-check", "--workdir", workdir)
    procs = [spawn(cmd, job_env(tag), log) for log in logs]
    try:
        # While they run (some job directories are only half made): the index still answers.
        wait_for(
            lambda: any((d / "job.json").exists() for d in job_dirs(workdir) if d.name not in made),
            START_TIMEOUT_S,
            "a first job record",
            log=logs[0],
        )
        assert_index_tolerates(workdir, tag)
        for proc, log in zip(procs, logs):
            assert proc.wait(timeout=START_TIMEOUT_S) == 0, tail(log)
    finally:
        for proc in procs:
            reap(proc)
    jobs = [d for d in job_dirs(workdir) if d.name not in made]
    assert len(jobs) == 6, [d.name for d in jobs]
    by_cli: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
    for job_dir in jobs:
        record = read_json(job_dir / records.RECORD_NAME)
        assert record["job_id"] == job_dir.name
        assert record["outcome"] == "succeeded", record["reason"]
        by_cli[record["pid"]].append(record)
        # Nothing of another job mixed in: its log and events are its own.
        if not (record.get("cache") or {}).get("hit"):
            assert f"worker pid {record['worker_pid']} for job {job_dir.name}" in (job_dir / "job.log").read_text(
                encoding="utf-8"
            )
        events = [json.loads(line) for line in (job_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]
        assert events and {e["job_id"] for e in events} == {job_dir.name}
    assert sorted(by_cli) == sorted(p.pid for p in procs)
    assert all(sorted(r["num_tokens"] for r in recs) == [1, 2] for recs in by_cli.values())
    # Each compiled by a worker of its own, or (a bucket another CLI had finished first) served from the cache.
    workers = [r["worker_pid"] for recs in by_cli.values() for r in recs if not (r.get("cache") or {}).get("hit")]
    assert all(workers) and len(set(workers)) == len(workers)
    assert temporary_files(workdir) == []
    rows = assert_index_tolerates(workdir, tag)
    assert [r["path"] for r in rows] == ["half-truncated/compiler/graph.neff"]


# ---- a workdir that cannot be made, a file-size limit, a full disk ----------------------------------------


@pytest.mark.parametrize("where", ["under-a-regular-file", "under-proc"])
def test_a_workdir_that_cannot_be_created_exits_2_before_anything_starts(tmp_path, tag, where):
    if where == "under-a-regular-file":
        plain = tmp_path / "plain.txt"
        plain.write_text("not a folder\n")
        workdir = plain / "work"
    else:
        workdir = Path("/proc") / f"neffbench-{tag}" / "work"
    result = subprocess.run(
        neffbench_cmd("compile", "seed", "--workdir", workdir),
        cwd=REPO,
        env=job_env(tag),
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout == ""
    [line] = result.stderr.splitlines()  # one sentence: the path and the cause
    match = re.fullmatch(r"neffbench: the workdir (.+) cannot be created: ([^;]+); nothing was started\.", line)
    assert match and match[1] == str(workdir), line
    assert match[2] in ("Not a directory", "No such file or directory"), line
    assert not workdir.exists()
    assert wait_gone({}, tag) == {}  # the prestarted standby worker is gone too


class HalfWrittenFile(AssertionError):
    """A file in the job directory that a failed write left truncated."""


def assert_nothing_half_written(job_dir: Path) -> None:
    """Every file of the job that has a format of its own is whole, and no temporary file is left."""
    assert temporary_files(job_dir) == []
    for path in sorted(job_dir.rglob("*")):
        if not path.is_file():
            continue
        try:
            if path.suffix == ".json":
                json.loads(path.read_text(encoding="utf-8"))
            elif path.suffix == ".py":
                ast.parse(path.read_text(encoding="utf-8"))
            elif path.suffix in (".npz", ".pt"):
                with zipfile.ZipFile(path) as archive:
                    assert archive.testzip() is None
            elif path.name == "events.jsonl":
                [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        except (ValueError, SyntaxError, zipfile.BadZipFile, AssertionError) as exc:
            raise HalfWrittenFile(
                f"{path.relative_to(job_dir)} ({path.stat().st_size} bytes) is half-written: "
                f"{type(exc).__name__}: {exc}"
            ) from None


# A wrapper that sets the limit and execs the CLI: as a preexec_fn would, without forking a threaded pytest.
_LIMITED = (
    "import os, resource, signal, sys; limit = int(sys.argv[1]); "
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])"
)


@pytest.mark.parametrize(
    "limit",
    [
        30000,
        6000,  # reproduce.py is the first file past 6000 bytes: written atomically, it is never left half-written
        16000,
    ],
)
def test_a_file_size_limit_in_the_middle_of_a_job_fails_it_with_the_path_and_the_cause(tmp_path, tag, limit):
    workdir = tmp_path / "work"
    cmd = [sys.executable, "-c", _LIMITED, str(limit), *neffbench_cmd("compile", "seed", "--workdir", workdir)[1:]]
    result = subprocess.run(
        cmd, cwd=REPO, env=job_env(tag, "success"), capture_output=True, text=True, timeout=START_TIMEOUT_S
    )
    assert result.returncode == 1, result.stdout + result.stderr
    [job_dir] = job_dirs(workdir)
    record = read_json(job_dir / records.RECORD_NAME)  # complete, valid JSON
    assert record["outcome"] == "failed"
    match = re.match(r"cannot write (\S+): File too large", record["reason"] or "")
    assert match, record["reason"]
    failed = Path(match[1])
    assert failed.parent == job_dir or job_dir in failed.parents, failed
    assert "FAILED in " in result.stdout and record["reason"] in result.stdout
    assert wait_gone({}, tag) == {}
    assert_nothing_half_written(job_dir)


@pytest.mark.parametrize("full_from", ["the-fourth-write", "the-compiling-stage"])
def test_a_full_disk_under_job_json_fails_the_job_and_stops_its_processes(tmp_path, monkeypatch, tag, full_from):
    from neffbench.jobs import CompileJob
    from neffbench.presets import load_preset

    pidfile = tmp_path / "pids.txt"
    for key, value in fake_env("slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile)).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv(TAG_ENV, tag)  # the worker's environment, and so the compiler's, carries the tag
    real_write = records.write_record
    calls: list[str | None] = []
    full = [False]

    def write_record(job_dir: Path, record: dict[str, Any]) -> None:
        calls.append(record.get("stage"))
        if len(calls) >= 4 if full_from == "the-fourth-write" else record.get("stage") == "compiling":
            full[0] = True  # and it stays full
        if full[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write(job_dir, record)

    monkeypatch.setattr(records, "write_record", write_record)
    lines: list[str] = []
    runner = CompileJob(load_preset("seed"), workdir=tmp_path / "work", on_line=lines.append)
    runner.grace_s = 2.0
    job_dir = runner.start()
    result = runner.wait()  # if it raised, the runner SIGKILLs its group itself (and the tag fixture checks)
    expected = f"cannot write {job_dir / records.RECORD_NAME}: No space left on device"
    assert result.outcome == "failed" and result.reason == expected, result.reason
    assert f"neffbench: {expected}; stopping the job" in lines
    assert lines.count(f"neffbench: {expected}; stopping the job") == 1  # said once
    assert f"neffbench: failed: {expected}" in lines  # the log file itself is not written any more
    # The worker was stopped (SIGTERM to its group: the slow compiler would have exited 3 after 300 s), and
    # nothing of the job is left.
    assert result.exit_code is not None and result.exit_code < 0, result.exit_code
    job = {result.record["worker_pid"]: result.record["worker_pid_start"]}
    job.update({pid: None for pid in read_pidfile(pidfile).values()})
    left = wait_gone(job, tag)
    assert left == {}, describe(left)
    # The last job.json that could be written stays whole; nothing half-written beside it.
    on_disk = read_json(job_dir / records.RECORD_NAME)
    assert on_disk["outcome"] == "running" and on_disk["job_id"] == job_dir.name
    assert temporary_files(job_dir) == []
    if full_from == "the-compiling-stage":
        assert "compiling" in calls and on_disk["stage"] != "compiling"


# ---- crash consistency: many SIGKILLs at random moments ------------------------------------------------------


@dataclass
class CrashReport:
    """What a crash-consistency loop found, after the kills and the next start (``neffbench list``)."""

    kills: int
    seed: int
    seconds: float = 0.0
    gone_within: float = TAKEN_WITHIN_S
    ended_before_kill: int = 0  # CLIs that finished before their kill came (not counted as kills)
    delays: list[float] = field(default_factory=list)
    noted: dict[int, str | None] = field(default_factory=dict)  # every process of every job, noted at its kill
    left_before_list: dict[int, str | None] = field(default_factory=dict)  # alive gone_within s after the last kill
    left_after_list: dict[int, str | None] = field(default_factory=dict)
    list_returncode: int | None = None
    list_marked: int = 0
    job_dirs: int = 0
    without_record: list[str] = field(default_factory=list)  # killed between mkdir and the first job.json
    unparsable: list[str] = field(default_factory=list)
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    cache_hits: int = 0
    not_final: list[str] = field(default_factory=list)
    temporary: list[str] = field(default_factory=list)
    list_stderr: str = ""

    @property
    def ok(self) -> bool:
        return (
            not self.left_before_list
            and not self.left_after_list
            and self.list_returncode == 0
            and not self.unparsable
            and not self.not_final
            and not self.temporary
        )

    def summary(self) -> str:
        return (
            f"{self.kills} kills (seed {self.seed}) in {self.seconds:.1f} s; {self.job_dirs} job directories "
            f"({len(self.without_record)} without job.json yet); outcomes {dict(sorted(self.outcomes.items()))} "
            f"({self.cache_hits} served from the cache); {self.ended_before_kill} ended before their kill; "
            f"unparsable {self.unparsable}; not final {self.not_final}; temporary files {self.temporary}; "
            f"{len(self.noted)} processes noted, alive {self.gone_within:g} s after the last kill: {sorted(self.left_before_list)}, "
            f"after the next start: {sorted(self.left_after_list)}; list exit {self.list_returncode}, "
            f"{self.list_marked} marked interrupted by it"
        )


def crash_loop(
    workdir: Path,
    tag: str,
    kills: int,
    *,
    seed: int = DEFAULT_SEED,
    parallel: int = 2,
    max_delay: float = MAX_KILL_DELAY_S,
    cpu_check_share: float = 0.25,
    cached_share: float = 0.3,
    gone_within: float = TAKEN_WITHIN_S,
) -> CrashReport:
    """``kills`` times: start ``neffbench compile seed --workdir W`` (fake toolchain, success; sometimes
    ``--backend cpu-check``; mostly ``--no-cache``, else a cache hit may serve it), SIGKILL it a seeded random
    delay in [0, max_delay] after its own code began (its first child, the worker it starts before anything
    else, exists: Python's start-up, seconds on a loaded machine, is not part of the delay), ``parallel`` at a
    time. Then check the processes, run the next start (``neffbench list W``) and check every record."""
    rng = random.Random(seed)
    report = CrashReport(kills=kills, seed=seed, gone_within=gone_within)
    env = job_env(tag, "success")
    running: list[list] = []  # [the CLI, its delay, when to kill it (None: its code has not begun)]
    started = killed = 0
    t_start = time.monotonic()
    try:
        while killed < kills:
            while len(running) < parallel and started - report.ended_before_kill < kills:
                args = ["compile", "seed", "--workdir", workdir]
                if rng.random() < cpu_check_share:
                    args += ["--backend", "cpu-check"]
                if rng.random() >= cached_share:  # most compile for real; the rest may be served from the cache
                    args += ["--no-cache"]
                delay = rng.uniform(0.0, max_delay)
                report.delays.append(delay)
                running.append([spawn(neffbench_cmd(*args), env, None), delay, None])
                started += 1
            now = time.monotonic()
            for item in list(running):
                proc, delay, kill_at = item
                if proc.poll() is not None:  # finished on its own before its moment came
                    report.ended_before_kill += 1
                    running.remove(item)
                elif kill_at is None:
                    if _has_child(proc.pid):
                        item[2] = now + delay
                elif now >= kill_at:
                    report.noted.update(descendants(proc.pid))
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    killed += 1
                    running.remove(item)
            time.sleep(0.005)
    finally:
        for proc, _, _ in running:
            reap(proc)
    report.seconds = time.monotonic() - t_start

    def workers() -> dict[int, str | None]:
        found = {}
        for job_dir in job_dirs(workdir):
            rec = _record_or_none(job_dir)
            if isinstance(rec, dict) and rec.get("worker_pid"):
                found[rec["worker_pid"]] = rec.get("worker_pid_start")
        return found

    # Every job process gone soon after the last kill, before anything else touches the workdir.
    report.noted.update(workers())
    report.left_before_list = wait_gone(report.noted, tag, timeout=gone_within)
    listing = neffbench_list(workdir, tag)  # the next start
    report.list_returncode, report.list_stderr = listing.returncode, listing.stderr
    report.list_marked = listing.stderr.count(INTERRUPTED_LINE)
    for job_dir in job_dirs(workdir):
        report.job_dirs += 1
        path = job_dir / records.RECORD_NAME
        if not path.exists():
            report.without_record.append(job_dir.name)
            continue
        try:
            record = read_json(path)
        except ValueError:
            report.unparsable.append(job_dir.name)
            continue
        report.outcomes[record.get("outcome")] += 1
        report.cache_hits += bool((record.get("cache") or {}).get("hit"))
        if record.get("outcome") not in FINAL_OUTCOMES or record.get("job_id") != job_dir.name:
            report.not_final.append(job_dir.name)
    for tmp in temporary_files(workdir):
        report.temporary.append(str(tmp.relative_to(workdir)) + _writer(tmp, workdir))
    report.left_after_list = {**alive({**report.noted, **workers()}), **tagged(tag)}
    return report


def _has_child(pid: int) -> bool:
    try:
        return bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except OSError:
        return False


def _writer(tmp: Path, workdir: Path) -> str:
    """Whose temporary file: the job's own parent, or another CLI marking the job interrupted (by the pid in it)."""
    match = re.fullmatch(r"\.job\.json\.(\d+)\.tmp", tmp.name)
    if not match:
        return ""
    record = _record_or_none(tmp.parent)
    if record is None:
        return f" (pid {match[1]}; no job.json beside it: killed writing the job's first record)"
    who = "the job's own CLI" if record.get("pid") == int(match[1]) else "another CLI marking it interrupted"
    return f" (pid {match[1]}: {who}; job.json says {record.get('outcome')})"


def test_random_sigkills_leave_whole_final_records_no_temporary_file_and_no_process(tmp_path, tag):
    kills = int(os.environ.get(KILLS_ENV) or DEFAULT_KILLS)
    seed = int(os.environ.get(SEED_ENV) or DEFAULT_SEED)
    report = crash_loop(tmp_path / "work", tag, kills, seed=seed)
    print(report.summary())
    assert report.list_returncode == 0, report.list_stderr
    assert report.left_before_list == {}, f"{report.summary()}\n{describe(report.left_before_list)}"
    assert report.left_after_list == {}, f"{report.summary()}\n{describe(report.left_after_list)}"
    assert report.unparsable == [], report.summary()
    assert report.not_final == [], report.summary()
    assert report.temporary == [], report.summary()
    assert sum(report.outcomes.values()) + len(report.without_record) == report.job_dirs
    assert report.outcomes["interrupted"] > 0, report.summary()
