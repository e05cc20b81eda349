"""Nothing stale in the window: another workdir resets what showed the one before (the Sweeps chart and diff,
the Artifacts diff), status messages go after a while and never hide the toolchain summary."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PySide6.QtWidgets import QTreeWidgetItem

pytestmark = [pytest.mark.gui]
APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"


def _headers(tree) -> list[str]:
    head = tree.headerItem()
    return [head.text(i) for i in range(tree.columnCount())]


def test_another_workdir_resets_the_sweep_chart_and_both_diffs(window, qtbot, tmp_path):
    window.build_panels()
    sweeps = window.panels.sweeps.panel
    sweeps.plots.make()  # the chart, as the Sweeps tab shows it
    # As a sweep in the workdir before left them: points charted far from the origin, two points diffed.
    sweeps.marks.setData([40.0, 50.0], [700.0, 900.0])
    sweeps.chart.enableAutoRange()
    sweeps.chart.getPlotItem().getViewBox().updateAutoRange()
    sweeps.diff.setHeaderLabels(["What", "A: #3", "B: #5"])
    sweeps.diff.addTopLevelItem(QTreeWidgetItem(["optlevel", "1", "2"]))
    artifacts = window.panels.artifacts
    artifacts.diff.setHeaderLabels(["Section", "Field", "A: job-1", "B: job-2"])
    artifacts.diff.addTopLevelItem(QTreeWidgetItem(["spec", "optlevel", "1", "2"]))
    other = tmp_path / "other"
    other.mkdir()
    with qtbot.waitSignal(artifacts.scanned, timeout=10_000):
        window.set_workdir(other)
    assert sweeps.sweep is None and sweeps.model.rowCount() == 0
    assert sweeps.marks.points().size == 0 and sweeps.series == []
    assert sweeps.chart.getPlotItem().viewRange() == [[0.0, 1.0], [0.0, 1.0]]
    assert _headers(sweeps.diff) == ["What", "A", "B"] and sweeps.diff.topLevelItemCount() == 0
    assert _headers(artifacts.diff) == ["Section", "Field", "A", "B"] and artifacts.diff.topLevelItemCount() == 0
    qtbot.waitUntil(lambda: sweeps.summary.text().startswith("No sweep in this workdir yet"), timeout=10_000)
    assert artifacts.summary.text() == f"Nothing compiled yet in {other}"


def test_a_status_message_times_out_and_the_toolchain_summary_stays_in_view(window, qtbot, monkeypatch):
    from neffbench.gui.shell import sweeps

    monkeypatch.setattr(sweeps, "MESSAGE_MS", 300)
    window.build_panels()
    window.doctor_status.toolchain.setText("● Neuron toolchain: not found (torch-neuronx, neuronx-cc missing)")
    bar = window.statusBar()
    window.panels.sweeps.panel.message.emit("Diffed point 0 with point 3.")
    assert bar.currentMessage() == "Diffed point 0 with point 3."
    assert window.doctor_status.isVisible()  # a permanent widget: beside the message, never under it
    qtbot.waitUntil(lambda: bar.currentMessage() == "", timeout=30_000)
    assert window.doctor_status.isVisible()


def test_every_status_message_of_the_window_has_a_timeout():
    """A message without one stays until the next: "Diffed…" read hours later as what just happened."""
    untimed = []
    for path in APP.rglob("*.py"):
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        calls = {id(n.func): n for n in nodes if isinstance(n, ast.Call)}
        for node in nodes:
            if not (isinstance(node, ast.Attribute) and node.attr == "showMessage"):
                continue
            call = calls.get(id(node))
            if call is None:
                untimed.append(f"{path.relative_to(APP)}:{node.lineno} (connected as a slot: no timeout)")
            elif len(call.args) + len(call.keywords) < 2:
                untimed.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert not untimed, untimed
