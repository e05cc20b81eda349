"""Sweeps in the window: the dialog shows the points and their problems before anything starts, the Compile
tab follows each point, and the Sweeps tab compares them (sort, filter, chart, diff of two points)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from neffbench.presets import load_preset
from tests.test_gui_compile import JOB_TIMEOUT_MS, use_fakes

pytestmark = [pytest.mark.gui]


def test_the_dialog_counts_points_and_lists_invalid_ones_before_starting(qtbot):
    from neffbench.gui.sweeps.dialog import SweepDialog

    dialog = SweepDialog(load_preset("seed"), backend="cpu-check")
    qtbot.addWidget(dialog)
    assert not dialog.start_button.isEnabled()  # no values yet
    assert dialog.summary.text() == (
        "Nothing to sweep yet: choose a field and type its values, separated by commas, in a row above"
    )
    assert "--over" not in dialog.invalid_list.item(0).text()  # the window's words, not the command line's
    row = dialog._rows[0]
    row.field.setCurrentIndex(row.field.findData("compiler.optlevel"))
    row.values.setText("1,2,7")
    qtbot.waitUntil(lambda: dialog.plan.count == 3 and dialog.cached is not None, timeout=30_000)
    assert dialog.summary.text().startswith("3 points: 2 to compile, 1 invalid")
    assert "per job" in dialog.summary.text()  # the memory estimate, before anything starts
    assert dialog.invalid_list.count() == 1
    assert dialog.invalid_list.item(0).text().startswith("Point 3 (Opt level 7): Opt level must be")  # counted from 1
    assert dialog.start_button.isEnabled()
    dialog.strict_check.setChecked(True)  # --strict: one invalid point and nothing runs
    dialog.replan()
    assert not dialog.start_button.isEnabled()
    second = dialog.add_axis("compiler.auto_cast", "none,all")
    qtbot.waitUntil(lambda: dialog.plan.count == 6, timeout=30_000)
    # In words, as the form says it: labels and values, not `compiler.optlevel=1,2,7` (the CLI keeps that).
    assert dialog.grid_words.text() == "Opt level: 1, 2 and 7 × Auto-cast: none and all, every combination."
    assert row.field.currentText() == "Opt level" and "--over compiler.optlevel=" in row.field.itemData(
        row.field.currentIndex(), Qt.ItemDataRole.ToolTipRole
    )
    texts = [dialog._rows[0].field.itemText(i) for i in range(dialog._rows[0].field.count())]
    assert not any("compiler." in t or "=" in t for t in texts), texts
    dialog.jobs_spin.setValue(2)
    dialog.replan()
    assert "2 at once need up to" in dialog.summary.text()
    second.remove.click()
    qtbot.waitUntil(lambda: dialog.plan.count == 3, timeout=30_000)


def _sweep(window, qtbot, overs, *, executor="local", jobs=1, cancel_when=None):
    from neffbench.gui.sweeps.controller import SweepOptions
    from neffbench.sweeps import plan

    spec = window.current_spec()
    the_plan = plan(spec, overs, backend=window.controllers.compile.backend)
    with qtbot.waitSignal(window.panels.sweeps.controller.finished, timeout=JOB_TIMEOUT_MS * 2) as blocker:
        window.panels.sweeps.start(the_plan, SweepOptions(executor=executor, jobs=jobs))
        if cancel_when is not None:
            qtbot.waitUntil(lambda: cancel_when(window), timeout=JOB_TIMEOUT_MS)
            window.cancel_action.trigger()
    return the_plan, blocker.args[0]


@pytest.mark.slow
def test_a_sweep_runs_point_by_point_and_is_compared_in_the_sweeps_tab(window, qtbot):
    window.build_panels()
    window.controllers.compile.backend = "cpu-check"
    window.apply_preset("seed")
    the_plan, result = _sweep(window, qtbot, ["compiler.optlevel=1,2", "inputs.num_tokens=8,16"], jobs=2)
    assert result.state == "succeeded"
    # The Compile tab: one row per point, each ended, none left running; the headline counts them.
    states = [state for _, state in window.panels.compile.stages.states()]
    assert len(states) == 4 and set(states) == {"succeeded"}
    # Each row in the sweep dialog's words, numbered from 1 (not ``#0 optlevel=1 num_tokens=8``).
    assert window.panels.compile.stages.states()[0][0] == "#1 Opt level 1, Tokens (buckets) 8"
    results = window.panels.compile.results
    assert results.topLevelItemCount() == 4
    assert results.topLevelItem(0).text(0).startswith("Opt level ")
    assert all(results.topLevelItem(i).text(2) for i in range(4))  # each point's NEFF (here: why there is none)
    assert window.panels.compile.state_label.text().startswith("Sweep done: 4 succeeded.")
    assert window.statusBar().currentMessage().startswith("Sweep done")
    # The Sweeps tab: the table, sortable and filterable, and a chart point per shown row.
    panel = window.panels.sweeps.panel
    qtbot.waitUntil(
        lambda: (
            panel.sweep is not None
            and panel.sweep["sweep_id"] == result.sweep_id
            and panel.sweep["state"] == "succeeded"
            and panel.proxy.rowCount() == 4
        ),
        timeout=10_000,
    )
    head = [panel.model.headerData(i, Qt.Orientation.Horizontal) for i in range(panel.model.columnCount())]
    assert head[:4] == ["#", "optlevel", "num_tokens", "outcome"]
    panel.x_combo.setCurrentIndex(panel.x_combo.findData("inputs.num_tokens"))
    xs, ys, outcomes, _ = panel.chart_points()
    assert sorted(xs) == [8.0, 8.0, 16.0, 16.0] and len(ys) == 4 and set(outcomes) == {"succeeded"}
    panel.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # numbers sort as numbers
    assert [panel.proxy.index(i, 2).data() for i in range(4)] == ["16", "16", "8", "8"]
    panel.filter_edit.setText("16")
    assert panel.proxy.rowCount() >= 2 and all(
        "16" in " ".join(panel.proxy.index(r, c).data() for c in range(panel.proxy.columnCount()))
        for r in range(panel.proxy.rowCount())
    )
    panel.filter_edit.clear()
    # Two points diffed: the swept fields that differ, from each job's spec.
    selection = panel.table.selectionModel()
    from PySide6.QtCore import QItemSelectionModel

    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    by_point = {panel.proxy.index(r, 0).data(): r for r in range(4)}
    for point in ("1", "4"):  # numbered from 1: optlevel 1 / num_tokens 8 and optlevel 2 / num_tokens 16
        selection.select(panel.proxy.index(by_point[point], 0), flags)
    assert panel.diff_button.isEnabled()
    panel.diff_button.click()
    rows = {
        panel.diff.topLevelItem(i).text(0): (panel.diff.topLevelItem(i).text(1), panel.diff.topLevelItem(i).text(2))
        for i in range(panel.diff.topLevelItemCount())
    }
    assert rows["optlevel"] == ("1", "2") and rows["spec compiler.optlevel"] == ("1", "2")
    assert rows["spec inputs.num_tokens"] == ("[8]", "[16]")


@pytest.mark.slow
def test_cancelling_a_sweep_ends_every_point_and_leaves_nothing_running(window, qtbot, monkeypatch):
    use_fakes(monkeypatch, "slow")
    window.build_panels()
    window.apply_preset("seed")

    def first_running(w):
        return any(state == "running" for _, state in w.panels.compile.stages.states())

    _, result = _sweep(window, qtbot, ["compiler.optlevel=1,2,3"], cancel_when=first_running)
    assert result.state == "cancelled"
    states = [state for _, state in window.panels.compile.stages.states()]
    assert "running" not in states and "pending" not in states and "cancelled" in states
    assert window.panels.compile.state_label.text().startswith("Sweep cancelled:")
    assert window.compile_action.isEnabled() and not window.cancel_action.isEnabled()
    panel = window.panels.sweeps.panel
    qtbot.waitUntil(lambda: (panel.sweep or {}).get("state") == "cancelled", timeout=10_000)
    assert {row["outcome"] for row in panel.rows} <= {"cancelled", "succeeded"}
    assert "cancelled" in {row["outcome"] for row in panel.rows}


@pytest.mark.slow
def test_latency_is_charted_against_error_for_a_sweep_that_was_run_and_compared(
    window, qtbot, tmp_path, neffbench_in_process
):
    from tests.test_compare import _compiled_here

    _compiled_here(neffbench_in_process, tmp_path)
    swept = neffbench_in_process(
        "sweep", "spec.toml", "--over", "compiler.optlevel=1,2", "--backend", "cpu-check", "--compare",
        "--runtime", "cpu", "--compare-depth", "1", "--iterations", "3", cwd=tmp_path,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stdout + swept.stderr
    window.build_panels()
    panel = window.panels.sweeps.panel
    panel.workdir = str(tmp_path / "wd")
    panel.rescan()
    qtbot.waitUntil(lambda: panel.sweep is not None and panel.proxy.rowCount() == 2, timeout=15_000)
    panel.y_combo.setCurrentText("run latency (p50)")
    panel.x_combo.setCurrentIndex(panel.x_combo.findData("metric:error vs float64"))
    xs, ys, outcomes, ticks = panel.chart_points()
    assert len(xs) == 2 and all(x > 0 for x in xs) and all(y > 0 for y in ys) and not ticks
    assert panel.chart.getPlotItem().getAxis("bottom").labelText == "max abs error vs float64"
    head = [panel.model.headerData(i, Qt.Orientation.Horizontal) for i in range(panel.model.columnCount())]
    assert "run error" in head
    # Any layer's error across the points: each point's own compare at that module.
    assert not panel.layer_combo.isEnabled()  # no layer measure chosen
    panel.select_layer("layers.2")
    panel.y_combo.setCurrentText("layer error vs float64")
    panel.x_combo.setCurrentIndex(panel.x_combo.findData("compiler.optlevel"))
    assert panel.layer_combo.isEnabled() and panel.layer_combo.currentText() == "layers.2"
    xs, ys, _, _ = panel.chart_points()
    expected = {r["values"]["compiler.optlevel"]: r["layers"]["layers.2"]["vs_float64"] for r in panel.rows}
    assert dict(zip(xs, ys)) == expected and all(y > 0 for y in ys)
    assert panel.chart.getPlotItem().getAxis("left").labelText == "layers.2: max abs error vs float64"
    assert "layer error vs float64 at layers.2 against" in panel.chart.getPlotItem().titleLabel.text


def test_a_sweep_points_compiler_progress_counts_as_output(qtbot):
    """While a point compiles, the compiler's progress dots are signs of life, as in a compile of its own."""
    from neffbench.gui.compile.panel import CompilePanel

    panel = CompilePanel()
    qtbot.addWidget(panel)
    panel.begin_run("Point")
    panel.show_sweep_event({"type": "progress", "dots": 7, "point": 0})
    panel._on_clock_timeout()
    assert panel.life_label.text() == "Last output 0:00 ago · compiler progress ....... (7 dots)"


def _sweep_rows():
    """A sweep of num_tokens over two optlevels, its compile times under a second, point 3 failed."""
    axes = [
        {"field": "inputs.num_tokens", "values": [1, 8], "texts": ["1", "8"]},
        {"field": "compiler.optlevel", "values": [1, 2], "texts": ["1", "2"]},
    ]
    sweep = {
        "schema_version": 1,
        "sweep_id": "seed-20260101T000000Z-ddd685fa",
        "name": "seed",
        "state": "succeeded",
        "axes": axes,
        "short_names": {"inputs.num_tokens": "num_tokens", "compiler.optlevel": "optlevel"},
        "points": [],
    }
    rows = []
    for point, (tokens, opt, seconds) in enumerate(((1, 1, 0.84), (1, 2, 0.88), (8, 1, 0.9), (8, 2, 0.94))):
        rows.append(
            {
                "point": point,
                "label": f"num_tokens={tokens} optlevel={opt}",
                "values": {"inputs.num_tokens": tokens, "compiler.optlevel": opt},
                "bucket": {"num_tokens": tokens},
                "outcome": "failed" if point == 3 else "succeeded",
                "cached": False,
                "reason": None,
                "problems": [],
                "job_id": f"seed-{point}",
                "job_dir": None,
                "node": None,
                "attempts": 1,
                "lost_attempts": [],
                "memory_bytes": None,
                "peak_rss_bytes": None,
                "duration_s": seconds + 1,
                "compile_s": seconds,
                "trace_s": 0.1,
                "backend": "neuron",
                "makes_neff": True,
                "neff_bytes": 2048,
                "numerics": None,
                "latency": None,
                "accuracy": None,
            }
        )
    return sweep, rows


@pytest.fixture
def sweeps_panel(qtbot):
    from neffbench.gui.sweeps.panel import SweepsPanel

    panel = SweepsPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def _show(panel, sweep, rows):
    panel._on_loaded((panel._token, [sweep], sweep, rows))


def test_the_sweep_chart_reads_in_seconds_with_a_legend_of_its_series(sweeps_panel):
    panel = sweeps_panel
    _show(panel, *_sweep_rows())
    panel.x_combo.setCurrentIndex(panel.x_combo.findData("inputs.num_tokens"))
    left = panel.chart.getPlotItem().getAxis("left")
    # Seconds as seconds: no "(x0.001)" and ticks of 850, 900 for 0.85 s, 0.9 s.
    assert left.labelText == "compile s" and "x0.001" not in left.labelString()
    assert left.autoSIPrefixScale == 1.0
    legend = [label.text for _, label in panel.legend.items]
    assert legend == ["optlevel = 1", "optlevel = 2", "did not succeed"]
    assert len(panel.series) == 2 and [len(s.xData) for s in panel.series] == [2, 2]


def test_rows_selected_in_the_table_are_marked_on_the_chart(sweeps_panel):
    from PySide6.QtCore import QItemSelectionModel

    panel = sweeps_panel
    _show(panel, *_sweep_rows())
    assert panel.marks.points().size == 0
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    panel.table.selectionModel().select(panel.proxy.index(2, 0), flags)
    (mark,) = panel.marks.points()
    assert (mark.pos().x(), mark.pos().y()) == (8.0, 0.9)
    assert "selected in the table" in [label.text for _, label in panel.legend.items]
    panel.table.clearSelection()
    assert panel.marks.points().size == 0


def test_an_empty_sweeps_tab_draws_no_chart(sweeps_panel):
    panel = sweeps_panel
    panel._on_loaded((panel._token, [], None, []))  # a workdir without a sweep
    item = panel.chart.getPlotItem()
    assert "against" not in item.titleLabel.text
    assert not item.getAxis("left").isVisible() and not item.getAxis("bottom").isVisible()
    assert panel.series == [] and "No sweep" in panel.empty_text.textItem.toPlainText()


@pytest.mark.slow
def test_the_run_tabs_target_is_kept_after_a_sweep(window, qtbot, tmp_path):
    from tests.neff_factory import write_job

    window.build_panels()
    window.controllers.compile.backend = "cpu-check"
    window.apply_preset("seed")
    chosen = tmp_path / "chosen-job"
    write_job(chosen)
    window.panels.run.set_target(str(chosen))
    result = _sweep(window, qtbot, ["compiler.optlevel=1,2"])[1]
    assert result.state == "succeeded"
    qtbot.waitUntil(lambda: not window.panels.run.loading, timeout=10_000)
    assert window.panels.run.target_path == str(chosen)
