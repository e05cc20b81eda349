"""The Numerics tab with real compares on the cpu runtime: chart, first divergent, table, a tap's histograms and
source line, Cancel, an overlaid earlier compare, and opening it from the Artifacts and Run tabs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.test_compare import _project

pytestmark = [pytest.mark.gui, pytest.mark.slow]
COMPARE_TIMEOUT_MS = 120_000
LOAD_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """A cpu-check job of a small model whose layers.2.cast does its float32 arithmetic in bfloat16, and one
    compare of it (depth 1) kept by the command line."""
    job = _project(tmp_path_factory.mktemp("numerics"), "cpu-check")
    proc = subprocess.run(
        [sys.executable, "-m", "neffbench", "compare", str(job), "--runtime", "cpu", "--depth", "1", "--json"],
        cwd=job.parent.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
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
    """Live processes below ``pid`` (from /proc: no psutil here)."""
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
    return found


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
    with qtbot.waitSignal(window.artifacts.scanned, timeout=LOAD_TIMEOUT_MS):
        window.artifacts.rescan()
    window.artifacts.select(str(job))
    button = window.artifacts.buttons["compare"]
    assert button.isEnabled() and button.text() == "Compare layer by layer…"
    with qtbot.waitSignal(window.numerics.scanned, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentIndex() == NUMERICS_TAB and window.numerics.job_dir == str(job)
    assert window.numerics.document is not None and window.numerics.table.rowCount() > 0
    # From the Run tab: its current job (here the tapped variant, which has no compare of its own).
    tapped = job.parent / window.numerics.document["tapped_job"]
    window.tabs.setCurrentIndex(RUN_TAB)
    with qtbot.waitSignal(window.run_panel.history_loaded, timeout=LOAD_TIMEOUT_MS):
        window.run_panel.set_target(str(tapped))
    assert window.run_panel.compare_button.isEnabled()
    with qtbot.waitSignal(window.numerics.scanned, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(window.run_panel.compare_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentIndex() == NUMERICS_TAB and window.numerics.job_dir == str(tapped)
    assert window.numerics.document is None and window.numerics.table.rowCount() == 0
