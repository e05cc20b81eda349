"""The Numerics tab with real compares on the cpu runtime: chart, first divergent, table, a tap's histograms and
source line, Cancel, an overlaid earlier compare, and opening it from the Artifacts and Run tabs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.cli import neffbench
from tests.processes import session_servers
from tests.test_compare import _project

pytestmark = [pytest.mark.gui, pytest.mark.slow]
COMPARE_TIMEOUT_MS = 120_000
LOAD_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def job(tmp_path_factory, compiled) -> Path:
    """A cpu-check job of a small model whose layers.2.cast does its float32 arithmetic in bfloat16, and one
    compare of it (depth 1) kept by the command line."""
    job = _project(compiled, tmp_path_factory.mktemp("numerics"), "cpu-check")
    proc = neffbench("compare", str(job), "--runtime", "cpu", "--depth", "1", "--json", cwd=job.parent.parent)
    assert proc.returncode == 3, proc.stderr  # divergent: layers.2.cast against float64
    return job


@pytest.fixture
def rig(qtbot):
    """A NumericsPanel wired to a CompareController as the window wires them."""
    from neffbench.gui.numerics.controller import CompareController
    from neffbench.gui.numerics.panel import NumericsPanel, wire
    from neffbench.gui.widgets import background, theme

    theme.configure_plots()
    panel = NumericsPanel()
    qtbot.addWidget(panel)
    panel.resize(1024, 700)
    panel.show()
    controller = CompareController()
    wire(panel, controller)
    yield panel, controller
    if controller.is_running:
        controller.cancel()
        qtbot.waitUntil(lambda: not controller.is_running, timeout=COMPARE_TIMEOUT_MS)
    qtbot.waitUntil(lambda: background.running() == 0, timeout=LOAD_TIMEOUT_MS)


def set_job(panel, qtbot, job_dir) -> None:
    with qtbot.waitSignal(panel.scanned, timeout=LOAD_TIMEOUT_MS):
        panel.set_job(str(job_dir))


def compare(panel, controller, qtbot, depth: int = 0, taps: str = "") -> dict:
    """Press Compare on the cpu runtime; the document, once the panel draws it."""
    panel.runtime_combo.setCurrentText("cpu")
    panel.depth_spin.setValue(depth)
    panel.taps_edit.setText(taps)
    with qtbot.waitSignal(controller.finished, timeout=COMPARE_TIMEOUT_MS) as done:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
        assert panel.running and panel.cancel_button.isEnabled() and not panel.compare_button.isEnabled()
    path = str(done.args[0].path)
    qtbot.waitUntil(lambda: str(panel.document_path) == path and panel.document is not None, timeout=LOAD_TIMEOUT_MS)
    return panel.document


def descendants(pid: int) -> list[int]:
    """Live processes below ``pid`` (from /proc: no psutil here), but for the session's warm-start server (the
    workers it forked are counted: they are this test's)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        below = [p for p, parent in parents.items() if parent in frontier]
        found += below
        frontier = below
    return [p for p in found if p not in session_servers()]


def test_a_compare_is_drawn_tap_by_tap_with_its_first_divergent_tap_and_histograms(rig, job, qtbot):
    from neffbench.gui.numerics.table import MODULE_COLUMN, VERDICT_COLUMN

    panel, controller = rig
    set_job(panel, qtbot, job)
    before = panel.shown_combo.count()  # the command line's compare, and any another test made
    assert job.name in panel.job_label.text() and before >= 1 and panel.document is not None
    steps = []
    controller.step_changed.connect(steps.append)
    doc = compare(panel, controller, qtbot)
    assert any("compiling the tapped variant" in s for s in steps) and panel.status_label.text().startswith("Compared")
    assert not panel.running and panel.compare_button.isEnabled() and not panel.cancel_button.isEnabled()
    assert panel.shown_combo.count() == before + 1 and panel.shown_combo.currentIndex() == 0  # the newest, drawn
    modules = [t["module"] for t in doc["taps"]]
    n, cast = len(modules), modules.index("layers.2.cast")
    # A point per tap against each reference; against eager (the CPU runs the same module) every tap is exact,
    # which a log axis cannot show: clamped to the floor, and said.
    for reference in ("vs_eager", "vs_float64"):
        x, y = panel.chart.points_of(reference)
        assert np.array_equal(x, np.arange(n)) and np.isfinite(y).all()
    x, y = panel.chart.points_of("vs_float64")
    assert y[cast] > 1 > y[cast - 1]
    assert np.allclose(y[cast], doc["taps"][cast]["vs_float64"]["times_tolerance"])
    eager = panel.chart.points_of("vs_eager")[1]
    assert np.allclose(eager, eager[0]) and eager[0] < y.min()
    assert "exact" in panel.chart.note.text()
    assert panel.chart.first_marked("vs_float64") == cast and panel.chart.first_marked("vs_eager") is None
    assert "layers.2.cast" in panel.chart.legend.text()
    # The table: a row per tap, in step with the chart.
    assert panel.table.rowCount() == n and panel.table.item(cast, MODULE_COLUMN).text() == "layers.2.cast"
    assert panel.table.item(cast, VERDICT_COLUMN).text() == "FAIL vs float64"
    assert panel.table.item(0, VERDICT_COLUMN).text() == "ok"
    assert "Taps can change what the compiler fuses" in panel.notes_label.text()
    # Selecting a row: the chart's cursor there, the source line, the histograms of the tap's values.
    with qtbot.waitSignal(panel.detail.loaded, timeout=LOAD_TIMEOUT_MS):
        panel.table.selectRow(cast)
    assert panel.chart.cursor.isVisible() and panel.chart.cursor.value() == cast
    assert "taps_models.py:13" in panel.detail.source.text() and "def forward(self, x):" in panel.detail.source.text()
    _, counts = panel.detail.device_curve.getData()
    _, reference = panel.detail.reference_curve.getData()
    assert counts.sum() == reference.sum() == 2 * 8  # the tap is 2x8
    assert panel.detail.diff_curve.getData()[1].sum() == 16 and "identical to the eager" in panel.detail.note.text()
    with qtbot.waitSignal(panel.detail.loaded, timeout=LOAD_TIMEOUT_MS):
        panel.detail.reference_combo.setCurrentIndex(1)
    assert "float64" in panel.detail.note.text() and "largest |difference|" in panel.detail.note.text()
    # Clicking a point of the chart selects its tap in the table.
    with qtbot.waitSignal(panel.detail.loaded, timeout=LOAD_TIMEOUT_MS):
        panel.chart.tap_clicked.emit(2)
    assert panel.table.selected_index() == 2 and panel.chart.cursor.value() == 2
    # Another job: nothing of this one is left.
    other = job.parent / doc["tapped_job"]
    set_job(panel, qtbot, other)
    assert panel.table.rowCount() == 0 and len(panel.chart.points_of("vs_float64")[0]) == 0
    assert not panel.notes_label.isVisible() and panel.chart.first_marked("vs_float64") is None
    assert "Select a tap" in panel.detail.title.text() and panel.shown_combo.count() == 1
    with qtbot.waitSignal(controller.failed, timeout=COMPARE_TIMEOUT_MS):
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    assert f"compare the job it taps ({job.name})" in panel.status_label.text()


def test_taps_are_named_by_module_path_at_the_users_own_line_and_a_cpu_run_is_called_cpu(rig, job, qtbot):
    """The axis names modules, not tap numbers; an nn.Linear is shown at the line of the user's file that called it;
    nothing of a run on the cpu runtime is called a device's; no label sits over the plot or its axes."""
    import pyqtgraph as pg

    from neffbench.gui.numerics.table import SOURCE_COLUMN

    panel, controller = rig
    set_job(panel, qtbot, job)
    doc = compare(panel, controller, qtbot, depth=2)
    modules = [t["module"] for t in doc["taps"]]
    axis = panel.chart.axis
    (step, shown), *_ = axis.tickValues(-0.5, len(modules) - 0.5, panel.chart.plot.width())
    labels = axis.tickStrings(shown, 1.0, step)
    assert labels and labels == [modules[int(v)] for v in shown] and "head" in modules
    assert not any(label.startswith("tap") or label.isdigit() for label in labels)
    assert "module, in execution order" in panel.chart.plot.getAxis("bottom").labelText
    # The line a user knows: their own call of the library's module, with where its forward lives said after it.
    head = modules.index("head")
    assert panel.table.item(head, SOURCE_COLUMN).text().startswith("net.py:")
    with qtbot.waitSignal(panel.detail.loaded, timeout=LOAD_TIMEOUT_MS):
        panel.table.selectRow(head)
    source = panel.detail.source.text()
    assert source.index("net.py:") < source.index("linear.py") and "self.head(x)" in source
    # A run on the cpu runtime is the CPU's, in the legend, the tips, the histograms.
    note = panel.detail.note.text()
    assert "━ CPU" in note and "CPU − eager" in note and "device" not in note
    assert "CPU vs float64" in panel.chart.legend.text() and "device" not in panel.chart.legend.text()
    # The tolerance is named in the legend under the chart, not by a label on its line; the end points stand clear
    # of the axes.
    assert "tolerance (1×)" in panel.chart.legend.text()
    assert not [c for c in panel.chart.tolerance.childItems() if isinstance(c, pg.TextItem)]
    (x_lo, x_hi), _ = panel.chart.plot.viewRange()
    assert x_lo < 0 and x_hi > len(modules) - 1


def test_a_compare_without_device_output_fails_no_tap_and_says_why(rig, job, qtbot, tmp_path, monkeypatch):
    """A runtime that gave no output of the taps (as a NEFF job's on a host without a NeuronCore): no tap is
    drawn or listed as a failure against eager, none is marked first divergent there, the tab says it cannot
    compare against eager, and what was compared (the CPU run against float64) is called so. A compare kept
    before this was said (every tap "no device output", each a failure) reads the same."""
    import shutil

    from neffbench.gui.numerics.table import VERDICT_COLUMN
    from neffbench.numerics import compare as numerics

    workdir = tmp_path / "wd"
    shutil.copytree(job.parent, workdir)
    copy = workdir / job.name
    real = numerics.Compare._run

    def run(self, job_dir, what):
        outputs, record = real(self, job_dir, what)
        if what == "the tapped variant":  # the module's own output only, as the eager module gives it
            outputs = {k: v for k, v in outputs.items() if k == "output0"}
        return outputs, record

    monkeypatch.setattr(numerics.Compare, "_run", run)
    done = numerics.Compare(copy, runtime="cpu", depth=1).run()
    assert done.document["verdict"] == "could not compare"
    panel, _ = rig
    set_job(panel, qtbot, copy)
    qtbot.waitUntil(
        lambda: panel.document is not None and panel.document.get("measured") == "eager", timeout=LOAD_TIMEOUT_MS
    )
    n = len(panel.document["taps"])
    assert "Cannot compare against eager: no device output" in panel.notes_label.text()
    assert len(panel.chart.points_of("vs_eager")[0]) == 0 and panel.chart.first_marked("vs_eager") is None
    assert len(panel.chart.points_of("vs_float64")[0]) == n  # the CPU run against float64, called so
    assert "the CPU run vs float64" in panel.chart.legend.text() and "first divergent of the CPU run" in (
        panel.chart.legend.text()
    )
    verdicts = [panel.table.item(i, VERDICT_COLUMN).text() for i in range(n)]
    assert all(v in ("ok", "FAIL vs float64") for v in verdicts) and "FAIL vs float64" in verdicts
    # An older compare of a host without device output: every tap "no device output", recorded as failed.
    old = json.loads(json.dumps(panel.document))
    for tap in old["taps"]:
        for reference in ("vs_eager", "vs_float64"):
            tap[reference] = {"ok": False, "problem": "no device output", "times_tolerance": None}
    old.update(measured=None, skipped={}, first_divergent={"vs_eager": "tap0", "vs_float64": "tap0"})
    panel._show(old)
    assert [panel.table.item(i, VERDICT_COLUMN).text() for i in range(n)] == ["not compared"] * n
    assert panel.chart.first_marked("vs_eager") is None and panel.chart.first_marked("vs_float64") is None
    assert np.isnan(panel.chart.points_of("vs_eager")[1]).all()  # no point at the top of the axis
    assert "Cannot compare against eager" in panel.notes_label.text()


def test_an_earlier_compare_is_overlaid_by_module_path(rig, job, qtbot):
    panel, controller = rig
    set_job(panel, qtbot, job)
    kept = next(  # the command line's compare
        k for k in (panel.shown_combo.itemData(i) for i in range(panel.shown_combo.count())) if k.document["depth"] == 1
    )
    assert [t["module"] for t in kept.document["taps"]] == [f"layers.{i}" for i in range(4)] + ["head"]
    doc = compare(panel, controller, qtbot, taps="layers.*.mlp, layers.* head")
    modules = [t["module"] for t in doc["taps"]]
    assert set(modules) == {f"layers.{i}{s}" for i in range(4) for s in ("", ".mlp")} | {"head"}
    overlay = next(i for i in range(panel.overlay_combo.count()) if panel.overlay_combo.itemData(i) == kept)
    panel.overlay_combo.setCurrentIndex(overlay)
    x, y = panel.chart.points_of("vs_float64", overlay=True)
    assert list(x) == [modules.index(t["module"]) for t in kept.document["taps"]]
    assert np.allclose(y, [t["vs_float64"]["times_tolerance"] for t in kept.document["taps"]])
    assert "(overlay)" in panel.chart.legend.text()
    # Escaped text is shown as rich text (an apostrophe, not its entity), whatever the sentence holds.
    assert {panel.chart.note.textFormat(), panel.chart.legend.textFormat()} == {Qt.TextFormat.RichText}
    assert len(panel.chart.points_of("vs_float64")[0]) == len(modules)  # the shown compare is still drawn
    panel.overlay_combo.setCurrentIndex(0)
    assert len(panel.chart.points_of("vs_float64", overlay=True)[0]) == 0


def test_cancel_stops_the_compare_and_leaves_no_child(rig, job, qtbot):
    panel, controller = rig
    set_job(panel, qtbot, job)
    panel.runtime_combo.setCurrentText("cpu")
    panel.taps_edit.setText("head")  # taps no other test asks for: the tapped variant is compiled, not cached
    with qtbot.waitSignal(controller.started, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(descendants(os.getpid())), timeout=LOAD_TIMEOUT_MS)  # the compile's worker
    with qtbot.waitSignal(controller.cancelled, timeout=COMPARE_TIMEOUT_MS):
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        assert panel.status_label.text() == "Cancelling…" and not panel.cancel_button.isEnabled()
    assert descendants(os.getpid()) == []
    assert not controller.is_running and not panel.running
    assert panel.compare_button.isEnabled() and not panel.cancel_button.isEnabled()
    assert panel.status_label.text().startswith("Cancelled")
    tapped = [json.loads(p.read_text()) for p in job.parent.glob("lossy-taps-*/job.json")]
    assert any(t["outcome"] == "cancelled" and t["taps_request"]["patterns"] == ["head"] for t in tapped)


def test_it_opens_from_the_artifacts_and_the_run_tabs(make_window, job, qtbot):
    from neffbench.gui.shell.tabs import NUMERICS_TAB, RUN_TAB

    window = make_window(workdir=job.parent)
    with qtbot.waitSignal(window.panels.artifacts.scanned, timeout=LOAD_TIMEOUT_MS):
        window.panels.artifacts.rescan()
    window.panels.artifacts.select(str(job))
    button = window.panels.artifacts.buttons["compare"]
    assert button.isEnabled() and button.text() == "Compare layer by layer…"
    with qtbot.waitSignal(window.panels.numerics.scanned, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentIndex() == NUMERICS_TAB and window.panels.numerics.job_dir == str(job)
    assert window.panels.numerics.document is not None and window.panels.numerics.table.rowCount() > 0
    # From the Run tab: its current job (here the tapped variant, which has no compare of its own).
    tapped = job.parent / window.panels.numerics.document["tapped_job"]
    window.tabs.setCurrentIndex(RUN_TAB)
    with qtbot.waitSignal(window.panels.run.history_loaded, timeout=LOAD_TIMEOUT_MS):
        window.panels.run.set_target(str(tapped))
    assert window.panels.run.compare_button.isEnabled()
    with qtbot.waitSignal(window.panels.numerics.scanned, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(window.panels.run.compare_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentIndex() == NUMERICS_TAB and window.panels.numerics.job_dir == str(tapped)
    assert window.panels.numerics.document is None and window.panels.numerics.table.rowCount() == 0
