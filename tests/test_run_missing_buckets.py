"""The buckets with no run yet: one definition for the Run tab's button and ``neffbench run --missing-buckets``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neffbench.runs.missing_buckets import ended_text, missing_buckets

pytestmark = pytest.mark.slow


@pytest.fixture
def buckets(compiled, tmp_path) -> list[Path]:
    """A cpu-check compile of the seed preset's 1 and 8 tokens, this test's own, smallest first."""
    made = compiled.jobs(tmp_path / "run-jobs", "seed", "--num-tokens", "1", "8", "--backend", "cpu-check")
    return sorted(made, key=lambda j: json.loads((j / "job.json").read_text())["bucket"]["num_tokens"])


def _run(neffbench_in_process, *args: str | Path):
    return neffbench_in_process("run", *args, "--iterations", "2", "--warmup", "0")


def test_the_buckets_without_a_run_of_the_curves_runtime_are_missing(buckets, neffbench_in_process):
    small, large = buckets
    runtime, rows = missing_buckets(small)  # no run yet: any runtime's curve
    assert runtime is None and [r["job_dir"] for r in rows] == [str(small), str(large)]
    assert _run(neffbench_in_process, small, "--runtime", "cpu").returncode == 0
    runtime, rows = missing_buckets(small)
    assert runtime == "cpu" and [r["job_dir"] for r in rows] == [str(large)]
    # Another runtime's curve has no point yet.
    assert [r["job_dir"] for r in missing_buckets(small, "nrtpy")[1]] == [str(small), str(large)]


def test_the_command_runs_the_missing_buckets_on_the_curves_runtime(buckets, neffbench_in_process):
    small, large = buckets
    assert _run(neffbench_in_process, small, "--runtime", "cpu").returncode == 0
    done = _run(neffbench_in_process, small, "--missing-buckets")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Not run yet on cpu: 8 tokens.\n\n== bucket 1 of 1 (")
    assert done.stdout.rstrip().endswith("Ran the 1 missing bucket: the bucket curve is complete.")
    [record] = [json.loads(p.read_text()) for p in (large / "runs").glob("*.json")]
    assert record["runtime"] == "cpu" and record["outcome"] == "succeeded"
    again = _run(neffbench_in_process, large, "--missing-buckets")
    assert (again.returncode, again.stdout) == (0, "Every bucket of this compile has a run on cpu: nothing to run.\n")


def test_the_command_refuses_what_only_one_job_has(buckets, neffbench_in_process):
    small, _large = buckets
    done = _run(neffbench_in_process, small, "--missing-buckets", "--neff", "x.neff", "--json")
    assert done.returncode == 2
    assert done.stderr == f"--missing-buckets runs other jobs than {small}: leave out --neff, --json.\n"
    assert not any(small.parent.glob("*/runs/*.json"))


def test_the_ending_says_what_stopped_the_rest():
    assert ended_text(3, 2, "failed") == "The missing buckets stopped: that run failed, so 2 buckets were not run."
    assert ended_text(2, 0, "succeeded") == "Ran the 2 missing buckets: the bucket curve is complete."


@pytest.mark.gui
def test_the_run_tab_offers_the_same_buckets(buckets, neffbench_in_process, qtbot):
    from neffbench.gui.run.panel import RunPanel
    from tests.test_gui_run import LOAD_TIMEOUT_MS

    small, large = buckets
    assert _run(neffbench_in_process, small, "--runtime", "cpu").returncode == 0
    panel = RunPanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.history_loaded, timeout=LOAD_TIMEOUT_MS):
        panel.set_target(str(small))
    assert panel.buckets.missing == [r["job_dir"] for r in missing_buckets(small)[1]] == [str(large)]
    qtbot.waitUntil(lambda: not panel.loading, timeout=LOAD_TIMEOUT_MS)
