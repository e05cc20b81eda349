"""The Run view with real run children on the cpu runtime: run, history, plots, cancel, bad targets, compare, buckets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

from neffbench.jobs.records import process_alive

pytestmark = [pytest.mark.gui, pytest.mark.slow]
RUN_TIMEOUT_MS = 120_000
LOAD_TIMEOUT_MS = 30_000


@pytest.fixture
def jobs(compiled, tmp_path) -> list[Path]:
    """Job directories of this test's own: a cpu-check compile of the seed preset, 1 and 8 tokens, smallest first."""
    made = compiled.jobs(tmp_path / "run-jobs", "seed", "--num-tokens", "1", "8", "--backend", "cpu-check")
    return sorted(made, key=lambda j: json.loads((j / "job.json").read_text())["bucket"]["num_tokens"])


@pytest.fixture
def rig(qtbot):
    """A RunPanel wired to a RunController as the window wires them."""
    from neffbench.gui.run.controller import RunController
    from neffbench.gui.run.panel import RunPanel
    from neffbench.gui.widgets import theme

    theme.configure_plots()
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.resize(1024, 700)
    controller = RunController()
    panel.run_requested.connect(controller.start)
    panel.cancel_requested.connect(controller.cancel)
    controller.started.connect(panel.show_started)
    controller.event_received.connect(panel.show_event)
    controller.lines_received.connect(panel.show_lines)
    controller.status_changed.connect(panel.show_status)
    controller.finished.connect(panel.show_finished)
    controller.failed.connect(panel.show_failed)
    yield panel, controller
    if controller.is_running:
        controller.cancel()
        qtbot.waitUntil(lambda: not controller.is_running, timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not panel.loading, timeout=LOAD_TIMEOUT_MS)


def set_target(panel, qtbot, path) -> None:
    with qtbot.waitSignal(panel.history_loaded, timeout=LOAD_TIMEOUT_MS):
        panel.set_target(str(path))


def run_and_wait(panel, controller, qtbot, iterations: int = 30):
    """Presses Run and waits for the result and for the history that shows it."""
    rows = panel.table.rowCount()
    panel.iterations_spin.setValue(iterations)
    panel.runtime_combo.setCurrentText("cpu")
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == rows + 1 and not panel.loading, timeout=LOAD_TIMEOUT_MS)
    return blocker.args[0]


def test_run_from_the_panel_records_a_cpu_run_and_plots_its_timings(rig, jobs, qtbot):
    from neffbench.gui.run.plots import CPU_COLOUR

    panel, controller = rig
    set_target(panel, qtbot, jobs[0])
    assert "cpu-check" in panel.target_label.text() and "No NEFF" in panel.target_label.text()
    assert "CPU" in panel.target_label.text() and jobs[0].name in panel.target_label.text()
    assert not panel.tabs.isTabEnabled(1) or len(panel.history.curve) > 1
    batches = []
    controller.lines_received.connect(batches.append)
    result = run_and_wait(panel, controller, qtbot, iterations=40)

    assert result.outcome == "succeeded", result.reason
    assert not controller.is_running and panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    record = json.loads(Path(result.path).read_text())
    assert record["runtime"] == "cpu" and record["on_device"] is False and len(record["durations_ms"]) == 40
    # The new run is the table's top row, selected, labelled CPU.
    top = panel.table.record_at(0)
    assert top["path"] == str(result.path) and top["runtime"] == "cpu"
    assert panel.table.item(0, 1).text() == "CPU" and panel.table.item(0, 9).text() == "match"
    assert [r["path"] for r in panel.table.selected_runs()] == [str(result.path)]
    # Its plots are its durations, in the CPU colour, named CPU.
    durations = np.asarray(record["durations_ms"])
    x, y = panel.latency.time_curves[0].getData()
    assert np.array_equal(y, durations) and np.array_equal(x, np.arange(1, 41))
    edges, counts = panel.latency.histogram_counts(0)
    assert len(edges) == len(counts) + 1 and counts.sum() + panel.latency.overflow[0] == durations.size
    assert edges[0] == durations.min()
    for curve in (panel.latency.hist_curves[0], panel.latency.time_curves[0]):
        assert curve.opts["pen"].color().name() == QColor(CPU_COLOUR).name()
    assert not panel.latency.hist_curves[1].isVisible()
    assert "CPU" in panel.latency.histogram.getPlotItem().titleLabel.text
    assert "CPU" in panel.latency.timeline.getPlotItem().titleLabel.text
    legend = [label.text for _sample, label in panel.latency.hist_legend.items]
    assert len(legend) == 1 and legend[0].startswith("CPU")
    # The verdict and the status line; the log arrived in batches.
    assert panel.verdict_label.text() == "match" and "atol" in panel.numerics_label.text()
    assert panel.stage_label.text() == "succeeded" and "p50" in panel.status_label.text()
    assert batches and all(isinstance(b, list) for b in batches)


def test_cancel_during_a_long_run_leaves_no_process(rig, jobs, qtbot):
    from neffbench.procs import group_alive

    panel, controller = rig
    set_target(panel, qtbot, jobs[0])
    events = []
    controller.event_received.connect(events.append)
    benchmarking = lambda e: e.get("type") == "stage" and e.get("stage") == "benchmarking"  # noqa: E731
    with qtbot.waitSignal(controller.event_received, check_params_cb=benchmarking, timeout=RUN_TIMEOUT_MS):
        controller.start(str(jobs[0]), {"runtime": "cpu", "iterations": 10_000_000})
    pid = next(e["pid"] for e in events if e.get("type") == "started")
    assert process_alive(pid)
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        assert panel.status_label.text() == "Cancelling…" and controller.is_cancelling
    result = blocker.args[0]
    assert result.outcome == "cancelled" and result.reason.startswith("cancelled ")
    # Nothing of the run is left once ``finished`` is out: the child and its process group are gone.
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not process_alive(pid) and not group_alive(pid)
    assert panel.stage_label.text() == "cancelled" and panel.status_label.text().startswith("Cancelled")
    assert json.loads(Path(result.path).read_text())["outcome"] == "cancelled"
    assert panel.run_button.isEnabled() and not controller.is_running


def test_a_folder_without_job_json_fails_with_its_sentence_and_starts_nothing(rig, qtbot, tmp_path):
    panel, controller = rig
    bad = tmp_path / "not-a-job"
    bad.mkdir()
    set_target(panel, qtbot, bad)
    assert "has no job.json" in panel.target_label.text()
    with qtbot.assertNotEmitted(controller.started), qtbot.waitSignal(controller.failed, timeout=30_000) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0] == f"{bad.resolve()} has no job.json: it is not a job directory."
    assert not controller.is_running and not (bad / "runs").exists() and list(bad.iterdir()) == []
    assert panel.status_label.text() == blocker.args[0] and panel.run_button.isEnabled()
    with qtbot.waitSignal(controller.failed, timeout=30_000) as blocker:
        controller.start(str(tmp_path / "missing"), {})
    assert "does not exist" in blocker.args[0] and not controller.is_running


def test_bad_options_fail_before_anything_starts(rig, jobs, qtbot):
    _panel, controller = rig
    runs = jobs[0] / "runs"
    before = sorted(runs.glob("*.json")) if runs.is_dir() else []
    with qtbot.waitSignal(controller.failed, timeout=30_000) as blocker:
        controller.start(str(jobs[0]), {"iterations": 0})
    assert "iterations must be at least 1" in blocker.args[0]
    assert (sorted(runs.glob("*.json")) if runs.is_dir() else []) == before


def test_two_selected_runs_are_overlaid_and_compared(rig, jobs, qtbot):
    panel, controller = rig
    set_target(panel, qtbot, jobs[0])
    first = run_and_wait(panel, controller, qtbot, iterations=20)
    second = run_and_wait(panel, controller, qtbot, iterations=25)
    assert [r["path"] for r in panel.table.selected_runs()] == [str(second.path)]
    # Ctrl+click the second row: the two newest runs, with the keyboard modifier a user would hold.
    row_rect = panel.table.visualRect(panel.table.model().index(1, 0))
    qtbot.mouseClick(
        panel.table.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ControlModifier,
        QPoint(row_rect.center()),
    )
    chosen = [r["path"] for r in panel.table.selected_runs()]
    assert sorted(chosen) == sorted([str(first.path), str(second.path)])
    assert len(panel.latency.records) == 2
    assert all(c.isVisible() for c in panel.latency.hist_curves + panel.latency.time_curves)
    assert len(panel.latency.time_curves[0].getData()[1]) == 20 and len(panel.latency.time_curves[1].getData()[1]) == 25
    text = panel.selection_label.text()
    assert "B / A" in text and "p50" in text and "p90" in text and "mean" in text and "×" in text
    legend = [label.text for _sample, label in panel.latency.hist_legend.items]
    assert len(legend) == 2 and legend[0].startswith("A: CPU") and legend[1].startswith("B: CPU")
    # The ratio is the later run's over the earlier one's.
    p50a, p50b = first.record["stats"]["p50_ms"], second.record["stats"]["p50_ms"]
    assert f"×{p50b / p50a:.2f}" in text
    assert panel.details.toPlainText().count("numerics against reference.npz") == 2


def test_bucket_plot_has_a_point_per_bucket_run(rig, jobs, qtbot):
    panel, controller = rig
    small, large = jobs
    set_target(panel, qtbot, small)
    assert panel.tabs.isTabEnabled(1) and panel.buckets.points == []
    run_and_wait(panel, controller, qtbot, iterations=20)
    assert [p["items_per_call"] for p in panel.buckets.points] == [1]
    assert panel.buckets.not_run.isVisibleTo(panel.buckets) and "8 tokens" in panel.buckets.not_run.text()
    assert "Not run yet on cpu" in panel.buckets.not_run.text()
    set_target(panel, qtbot, large)
    run_and_wait(panel, controller, qtbot, iterations=20)
    points = panel.buckets.points
    assert [p["items_per_call"] for p in points] == [1, 8] and not any(p["on_device"] for p in points)
    x, y = panel.buckets.latency_curve.getData()
    assert list(x) == [1, 8] and np.allclose(y, [p["p50_ms"] for p in points])
    _x, rate = panel.buckets.throughput_curve.getData()
    assert np.allclose(rate, [p["items_per_s"] for p in points]) and rate[1] > 0
    assert not panel.buckets.not_run.isVisibleTo(panel.buckets)
    assert "CPU" in panel.buckets.latency.getPlotItem().titleLabel.text


def test_panel_fits_1024x700_and_is_keyboard_reachable(rig, jobs, qtbot):
    panel, controller = rig
    panel.run_requested.disconnect(controller.start)  # only what Run asks for, not a run
    set_target(panel, qtbot, jobs[0])
    panel.resize(1024, 700)
    panel.show()
    qtbot.waitExposed(panel)
    parts = [
        panel.target_label,
        panel.runtime_combo,
        panel.run_button,
        panel.cancel_button,
        panel.stage_label,
        panel.status_label,
        panel.splitter,
    ]
    for part in parts:
        rect = part.geometry().translated(part.parentWidget().mapTo(panel, QPoint(0, 0)))
        assert panel.rect().contains(rect), part.objectName()
    top = [p for p in parts if p is not panel.splitter]
    splitter = panel.splitter.geometry()
    assert all(not p.geometry().intersects(splitter) for p in top if p.parentWidget() is panel)
    assert panel.tabs.height() >= 200 and panel.table.height() >= 90
    for name in (
        "run-button",
        "cancel-run-button",
        "run-runtime",
        "run-iterations",
        "run-warmup",
        "run-mode",
        "run-history",
        "run-histogram",
        "run-timeline",
        "run-bucket-latency",
        "run-verdict",
        "run-stage",
    ):
        assert panel.findChild(object, name) is not None, name
    for widget in (
        panel.runtime_combo,
        panel.iterations_spin,
        panel.warmup_spin,
        panel.mode_combo,
        panel.run_button,
        panel.table,
        panel.tabs,
    ):
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus
    # From the iterations box, Tab reaches the warm-up, the mode, then Run.
    panel.iterations_spin.setFocus()
    qtbot.waitUntil(panel.iterations_spin.hasFocus)
    for expected in (panel.warmup_spin, panel.mode_combo, panel.run_button):
        qtbot.keyClick(panel.focusWidget(), Qt.Key.Key_Tab)
        assert panel.focusWidget() is expected or expected.isAncestorOf(panel.focusWidget())
    with qtbot.waitSignal(panel.run_requested, timeout=30_000) as blocker:
        qtbot.keyClick(panel.run_button, Qt.Key.Key_Space)
    assert blocker.args == [str(jobs[0]), {"runtime": "auto", "iterations": 50, "warmup": 5, "mode": None}]


def test_a_runtime_that_cannot_run_here_fails_with_its_reason_in_red(rig, jobs, qtbot):
    from neffbench.gui.widgets import theme

    panel, controller = rig
    set_target(panel, qtbot, jobs[0])
    rows = panel.table.rowCount()
    # A run shown before, far from the origin: its axes must not stay on for a run that timed nothing.
    panel.latency.show_runs([{"runtime": "cpu", "on_device": False, "durations_ms": [40.0, 41.0, 45.0]}])
    for plot in (panel.latency.histogram, panel.latency.timeline):
        plot.getPlotItem().getViewBox().updateAutoRange()  # as a paint would
        assert plot.getPlotItem().viewRange()[0][1] > 2
    panel.runtime_combo.setCurrentText("nrtpy")  # a cpu-check job has no NEFF for nrtpy to load
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.outcome == "failed" and result.reason
    assert result.reason in panel.status_label.text() and theme.BAD in panel.status_label.styleSheet()
    assert panel.stage_label.text() == "failed"
    qtbot.waitUntil(lambda: panel.table.rowCount() == rows + 1 and not panel.loading, timeout=LOAD_TIMEOUT_MS)
    assert panel.table.item(0, 10).text() == "failed" and panel.table.item(0, 9).text() == "not compared"
    # The failed run is what the plots show: nothing, on empty axes; the runtime is still the one chosen.
    assert panel.latency.records == []
    for plot in (panel.latency.histogram, panel.latency.timeline):
        assert plot.getPlotItem().viewRange() == [[0.0, 1.0], [0.0, 1.0]]
    assert panel.runtime_combo.currentText() == "nrtpy"
    set_target(panel, qtbot, jobs[1])  # another target (a cpu-check job): a runtime it can take
    assert panel.runtime_combo.currentText() == "auto"


def test_checks_that_refuse_a_run_are_listed_one_a_line(rig, qtbot):
    panel, _controller = rig
    problems = ["the NEFF was compiled for trn2 but this host is trn1.", "input 'x' is float32; the NEFF wants bf16."]
    panel.show_started("/tmp/nowhere/runs/x-nrtpy.json")
    panel.show_event({"type": "checks", "problems": problems})
    assert panel.problems_label.isVisibleTo(panel)
    assert panel.problems_label.text().splitlines() == [f"• {p}" for p in problems]
    panel.show_event({"type": "checks", "problems": []})
    assert not panel.problems_label.isVisibleTo(panel)


def test_the_slow_outliers_are_one_tick_away(qtbot):
    from neffbench.gui.run.plots import LatencyPlots

    plots = LatencyPlots()
    qtbot.addWidget(plots)
    plots.show()
    record = {"durations_ms": [1.0 + 0.01 * (i % 7) for i in range(200)] + [9.0, 12.0], "runtime": "cpu"}
    plots.show_runs([record])
    # Two spikes off the plots by default, and a box in sight (not only the plots' context menu) to draw them.
    assert plots.overflow[0] == 2 and plots.outliers_check.isVisible()
    assert "Show the slow outliers" in plots.note.text() and "right-click" not in plots.note.text()
    plots.outliers_check.setChecked(True)
    edges, counts = plots.histogram_counts()
    assert plots.overflow[0] == 0 and edges[-1] == 12.0 and counts.sum() == 202
    view = plots.timeline.getPlotItem()
    qtbot.waitUntil(lambda: view.viewRange()[1][1] >= 12.0, timeout=10_000)
    assert not plots.note.isVisibleTo(plots)
    plots.outliers_check.setChecked(False)
    assert plots.overflow[0] == 2


def test_a_started_run_is_told_in_words_not_by_its_record_file(qtbot, tmp_path):
    from neffbench.gui.run.panel import RunPanel

    panel = RunPanel()
    qtbot.addWidget(panel)
    job = tmp_path / "seed-20260101T000000Z-7696da23"
    panel.show_started(str(job / "runs" / "20260101T000001.000000Z-auto.json"))
    text = panel.status_label.text()
    assert ".json" not in text and "auto" not in text
    assert text.startswith("Started a run of seed-20260101T000000Z-7696da23")
