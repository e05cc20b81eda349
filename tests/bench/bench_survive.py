"""Parent death and crash consistency: how soon a job's processes are gone after its parent's SIGKILL, and what
many SIGKILLs at random moments leave in a workdir.

1. ``neffbench compile seed`` with the slow fake compiler (which starts a grandchild), SIGKILLed once the
   compiler and the grandchild run: the time from the SIGKILL until the worker, the compiler and the
   grandchild are all gone, polled every 10 ms. Target: under 5 s in 100 of 100 runs.
2. The crash-consistency loop of tests/test_jobs_survive.py with more kills: every job.json parses, every
   outcome is final, no temporary file and no process is left after the next start.

Two runs go at a time (two cores); the helpers are the test module's.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from tests.test_jobs_survive import (
    DEFAULT_SEED,
    GONE_WITHIN_S,
    crash_loop,
    describe,
    kill_mid_compile,
    stop_tagged,
)

RUNS = int(os.environ.get("NEFFBENCH_BENCH_KILL_RUNS") or 100)
KILLS = int(os.environ.get("NEFFBENCH_BENCH_KILLS") or 200)
PARALLEL = 2
POLL_S = 0.01


def _kill_runs(root: Path) -> tuple[list[float | None], list[str]]:
    """RUNS kills of a compile's parent, PARALLEL at a time: seconds until the job's processes were gone
    (None: not within GONE_WITHIN_S), and what went wrong besides."""
    times: list[float | None] = []
    problems: list[str] = []
    lock = threading.Lock()
    counter = iter(range(RUNS))

    def work() -> None:
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            tag = uuid.uuid4().hex
            run_dir = root / f"run-{i:03d}"
            try:
                run_dir.mkdir(parents=True)
                report = kill_mid_compile(
                    run_dir / "work", tag, run_dir / "pids.txt", run_dir / "cli.log", limit=GONE_WITHIN_S, poll=POLL_S
                )
                gone, left = report.gone_s, report.left
            except Exception as exc:  # noqa: BLE001 - reported as a failed run
                gone, left = None, {}
                with lock:
                    problems.append(f"run {i}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            stray = stop_tagged(tag)
            with lock:
                times.append(gone)
                if left or stray:
                    problems.append(f"run {i}: left alive after {GONE_WITHIN_S:g} s: {describe({**left, **stray})}")

    threads = [threading.Thread(target=work, name=f"bench-survive-{n}") for n in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, problems


def run() -> list[str]:
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-survive-") as tmp_s:
        tmp = Path(tmp_s)
        t0 = time.monotonic()
        times, problems = _kill_runs(tmp / "kills")
        kill_s = time.monotonic() - t0
        measured = sorted(t for t in times if t is not None)
        under = sum(1 for t in measured if t < GONE_WITHIN_S)
        ms = (lambda v: f"{v * 1000:.0f} ms") if measured else None
        lines += [
            f"### Parent SIGKILLed mid-compile: time until every job process is gone ({RUNS} runs, {PARALLEL} at "
            f"a time, polled every {POLL_S * 1000:.0f} ms; {kill_s:.0f} s)",
            "",
            "| runs | min | median | max | under 5 s |",
            "|---|---|---|---|---|",
            f"| {len(times)} | {ms(measured[0]) if measured else '-'} | "
            f"{ms(statistics.median(measured)) if measured else '-'} | {ms(measured[-1]) if measured else '-'} | "
            f"{under} of {RUNS} |",
            "",
            f"Target: under {GONE_WITHIN_S:g} s in {RUNS} of {RUNS} runs: "
            f"{'met' if under == RUNS and not problems else 'NOT met'}.",
        ]
        lines += [f"- {p}" for p in problems[:10]]
        lines.append("")

        tag = uuid.uuid4().hex
        t0 = time.monotonic()
        try:
            report = crash_loop(tmp / "crash" / "work", tag, KILLS, seed=DEFAULT_SEED, gone_within=GONE_WITHIN_S)
        finally:
            stray = stop_tagged(tag)
        lines += [
            f"### Crash consistency: {KILLS} SIGKILLs at random moments (seed {DEFAULT_SEED}, delays 0-2.5 s, "
            f"{PARALLEL} at a time; {time.monotonic() - t0:.0f} s)",
            "",
            "| check | found |",
            "|---|---|",
            f"| job directories | {report.job_dirs} ({len(report.without_record)} without a job.json: killed "
            "before the first record) |",
            f"| outcomes after the next start | {', '.join(f'{k} {v}' for k, v in sorted(report.outcomes.items()))}"
            f" ({report.cache_hits} served from the cache; {report.ended_before_kill} runs ended before their kill) |",
            f"| job.json that does not parse | {len(report.unparsable)} |",
            f"| outcome not final (running) | {len(report.not_final)} |",
            f"| temporary files left | {len(report.temporary)} |",
            f"| processes alive {GONE_WITHIN_S:g} s after the last kill | {len(report.left_before_list)} |",
            f"| processes alive after the next start | {len(report.left_after_list) + len(stray)} |",
            f"| `neffbench list` (the next start) | exit {report.list_returncode}, marked {report.list_marked} |",
            "",
            f"Verdict: {'consistent' if report.ok and not stray else 'NOT consistent'}.",
        ]
        lines += [f"- left behind: `{t}`" for t in report.temporary[:10]]
        if len(report.temporary) > 10:
            lines.append(f"- ... and {len(report.temporary) - 10} more")
    return lines
