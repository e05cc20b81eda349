"""The Preview tab for kernels other than RoPE: a kernel's plots and badges, and the CPU check report."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from neffbench.gui.preview.kernel_panel import GenericPreviewPanel
from neffbench.gui.preview.plots import quietest_corner
from neffbench.gui.widgets import theme
from neffbench.kernels.plots import KernelPreview, Plot, Series, histogram

pytestmark = pytest.mark.gui


def two_plots(scale: float = 1.0) -> KernelPreview:
    rng = np.random.default_rng(0)
    tokens = np.arange(32)
    curve = Plot(
        "RMS per token",
        "curve",
        "token",
        "RMS",
        [
            Series("before", tokens, scale * (1.4 + 0.02 * rng.standard_normal(32))),
            Series("after", tokens, scale * (1.0 + 0.01 * rng.standard_normal(32))),
            Series("expected", [0, 31], [scale, scale], "reference"),
        ],
        note="Every row comes out with about the weight's RMS.",
    )
    values = Plot(
        "Values",
        "histogram",
        "value",
        "count",
        [histogram("input", scale * rng.standard_normal(4000), bins=32)],
        note="Both on the same bins.",
    )
    return KernelPreview(
        "RMSNorm: 32 x 64 float32",
        [curve, values],
        badges={"max |err|": f"{3e-7 * scale:.2g}", "weight RMS": "1"},
        verdicts={"max |err|": True, "weight RMS": None},
        timings={"total": 0.012},
    )


def tensor(name: str, counts: list[int], *, nan: int = 0, inf: int = 0) -> dict:
    edges = np.linspace(-2.0, 2.0, len(counts) + 1).tolist()
    numel = sum(counts) + nan + inf
    return {
        "name": name,
        "dtype": "float32",
        "shape": [numel],
        "histogram": {"edges": edges, "counts": counts},
        "stats": {"numel": numel, "nan": nan, "inf": inf, "min": -2.0, "max": 2.0, "mean": 0.0, "std": 1.0},
    }


def module_report(**changes) -> dict:
    """A report as the probe child writes it for a module kernel, by hand."""
    report = {
        "ok": True,
        "bucket": {"batch": 1, "seq": 16},
        "timings": {"build_s": 0.02, "trace_s": 0.05},
        "info": {"entry": "mymodels.py:Net"},
        "problems": [],
        "op_counts": {"aten::linear": 2, "aten::add": 3, "aten::relu": 1},
        "data_dependent": [],
        "unused_inputs": [],
        "constant_outputs": [],
        "interface": {"inputs": ["input0 <- x"], "outputs": ["output0 <- out"]},
        "inputs": [tensor("x", [1, 4, 6, 4, 1])],
        "outputs": [tensor("out", [2, 3, 5, 3, 2, 1])],
    }
    report.update(changes)
    return report


@pytest.fixture
def panel(qtbot):
    widget = GenericPreviewPanel()
    qtbot.addWidget(widget)
    widget.resize(1024, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture(scope="module")
def rms_norm_report() -> dict:
    """A real check of the rms_norm preset with a residual (two inputs, two outputs) from a probe child."""
    from neffbench.presets import load_preset
    from neffbench.probe.client import ask
    from neffbench.spec import to_dict

    report = ask("check", {"spec": to_dict(load_preset("llama3-8b-rms-norm-residual"))}, timeout=120)
    assert report["ok"], report
    return report


def _tree_rows(panel) -> dict[str, list[str]]:
    tree = panel.check_view.tensor_tree
    rows = {}
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        rows[group.text(0).split(" ")[0]] = [group.child(i).text(0) for i in range(group.childCount())]
    return rows


def _interface_lines(panel) -> list[str]:
    tree = panel.check_view.interface_tree
    lines = []
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        lines += [group.text(0)] + [group.child(i).text(0) for i in range(group.childCount())]
    return lines


def _op_rows(panel) -> list[tuple[str, int]]:
    table = panel.check_view.ops_table
    return [(table.item(r, 0).text(), int(table.item(r, 1).text())) for r in range(table.rowCount())]


# ---- the kernel's plots ----


def test_show_preview_draws_each_plot_with_its_title_axes_legend_and_note(panel, qtbot):
    panel.show_preview(two_plots())
    widgets = panel.plot_widgets()
    assert list(widgets) == ["RMS per token", "Values"]
    for title, widget in widgets.items():
        assert widget.getPlotItem().titleLabel.text == title
    qtbot.waitUntil(lambda: all(w.isVisible() for w in widgets.values()), timeout=30_000)
    cells = panel.grid.cells
    assert cells["RMS per token"].legend_names() == ["before", "after", "expected"]
    assert cells["Values"].legend_names() == ["input"]
    assert cells["RMS per token"].plot_item.getAxis("bottom").labelText == "token"
    assert cells["RMS per token"].note_label.text() == "Every row comes out with about the weight's RMS."
    before, _after, expected = cells["RMS per token"].items
    assert expected.opts["pen"].style() == Qt.PenStyle.DashLine
    assert before.opts["pen"].style() == Qt.PenStyle.SolidLine
    (bins,) = cells["Values"].items
    assert bins.opts["stepMode"] == "center"
    assert panel.title_label.text() == "RMSNorm: 32 x 64 float32"
    assert panel.badges["max |err|"].text() == "max |err|: 3e-07"
    assert theme.GOOD in panel.badges["max |err|"].styleSheet()
    assert theme.GOOD not in panel.badges["weight RMS"].styleSheet()
    assert "12 ms" in panel.status_label.text()


def test_showing_a_preview_again_reuses_the_plot_widgets_and_curves(panel):
    panel.show_preview(two_plots())
    widgets = panel.plot_widgets()
    items = {title: list(cell.items) for title, cell in panel.grid.cells.items()}
    again = two_plots(scale=2.0)
    panel.show_preview(again)
    assert all(panel.plot_widgets()[t] is w for t, w in widgets.items())
    for title, cell in panel.grid.cells.items():
        assert all(a is b for a, b in zip(cell.items, items[title], strict=True))
    _x, y = panel.grid.cells["RMS per token"].items[0].getOriginalDataset()
    np.testing.assert_allclose(y, again.plots[0].series[0].y)
    assert panel.badges["max |err|"].text() == "max |err|: 6e-07"


def test_a_new_plot_title_gets_its_own_widget_and_a_gone_one_is_dropped(panel):
    panel.show_preview(two_plots())
    kept = panel.plot_widgets()["Values"]
    other = two_plots()
    other.plots[0].title = "Error against float64"
    panel.show_preview(other)
    assert list(panel.plot_widgets()) == ["Error against float64", "Values"]
    assert panel.plot_widgets()["Values"] is kept


def test_log_y_and_bars_are_drawn_as_asked(panel):
    preview = two_plots()
    preview.plots[1].log_y = True
    preview.plots.append(Plot("Per dtype", "bars", "dtype", "eps", [Series("cost", ["float32", "bfloat16"], [1, 5])]))
    panel.show_preview(preview)
    cells = panel.grid.cells
    assert cells["Values"].plot_item.ctrl.logYCheck.isChecked()
    (bars,) = cells["Per dtype"].items
    assert bars.opts["height"].tolist() == [1, 5]
    ticks = cells["Per dtype"].plot_item.getAxis("bottom")._tickLevels
    assert [label for _pos, label in ticks[0]] == ["float32", "bfloat16"]


def test_the_legend_takes_an_empty_corner_or_goes_under_the_plot(panel, qtbot):
    # Data along the bottom and up the right: the top-left corner is the free one.
    x = np.linspace(0, 1, 200)
    assert quietest_corner(np.r_[x, np.ones(200)], np.r_[np.zeros(200), x], 0.3, 0.2) == ((0, 0), 0)
    preview = two_plots()
    panel.show_preview(preview)
    cell = panel.grid.cells["RMS per token"]
    # One curve runs along the top and one along the bottom: no corner is free, so the legend sits outside.
    qtbot.waitUntil(lambda: cell.plot_item.vb.height() > 100)
    assert cell.legend_corner is None and cell.legend is cell.below_legend
    hist = panel.grid.cells["Values"]
    assert hist.legend_corner in ((0, 0), (1, 0)) and hist.legend is hist.corner_legend


def test_nothing_overlaps_at_1024_by_700(panel, qtbot):
    preview = two_plots()
    preview.plots += [Plot(f"Extra {i}", "curve", "x", "y", [Series("s", [0, 1], [0, 1])]) for i in range(3)]
    panel.show_preview(preview)
    cells = list(panel.grid.cells.values())
    qtbot.waitUntil(lambda: all(c.height() >= 200 for c in cells))
    rects = [c.geometry() for c in cells]
    assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1 :])
    header_bottom = panel.tabs.geometry().top()
    assert panel.check_button.geometry().bottom() < header_bottom
    assert panel.scroll.verticalScrollBar().maximum() > 0  # five plots scroll rather than squash


# ---- the CPU check ----


@pytest.mark.slow  # a probe child (or a fresh interpreter)
def test_show_check_fills_tensors_interface_and_operators_from_a_real_report(panel, rms_norm_report):
    panel.show_check(rms_norm_report)
    assert _tree_rows(panel) == {"Inputs": ["x", "residual"], "Outputs": ["out", "residual"]}
    x_row = panel.check_view.tensor_tree.topLevelItem(0).child(0)
    assert x_row.text(1) == "bfloat16" and x_row.text(2) == "[128, 4096]"
    assert x_row.text(3) == f"{rms_norm_report['inputs'][0]['stats']['min']:.4g}"
    lines = _interface_lines(panel)
    for line in rms_norm_report["interface"]["inputs"] + rms_norm_report["interface"]["outputs"]:
        assert line in lines
    assert "input0 <- x" in lines
    ops = _op_rows(panel)
    assert dict(ops) == rms_norm_report["op_counts"]
    assert [n for _op, n in ops] == sorted(rms_norm_report["op_counts"].values(), reverse=True)
    assert panel.check_view.verdict_badge.text() == "CPU check passed"
    assert "num_tokens=128" in panel.check_label.text() and " ms" in panel.check_label.text()
    assert panel.tabs.currentWidget() is panel.check_view
    assert not panel.check_view.banner.isVisible()


@pytest.mark.slow  # a probe child (or a fresh interpreter)
def test_selecting_a_tensor_row_shows_its_histogram(panel, qtbot, rms_norm_report):
    panel.show_check(rms_norm_report)
    tree = panel.check_view.tensor_tree
    row = tree.topLevelItem(1).child(0)  # the output "out"
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(row).center())
    assert tree.currentItem() is row
    x, y = panel.check_view.hist_curve.getOriginalDataset()
    want = rms_norm_report["outputs"][0]["histogram"]
    assert y.tolist() == want["counts"]
    np.testing.assert_allclose(x, want["edges"])
    assert panel.check_view.hist_plot.titleLabel.text.startswith("out: bfloat16")


def test_a_data_dependent_op_is_highlighted_and_says_why(panel):
    report = module_report(
        ok=False,
        op_counts={"aten::add": 3, "aten::nonzero": 1},
        data_dependent=["aten::nonzero"],
        problems=[
            {
                "severity": "error",
                "message": "the traced graph uses aten::nonzero, whose output shape depends on the input values",
            }
        ],
    )
    panel.show_check(report)
    assert _op_rows(panel) == [("aten::add", 3), ("aten::nonzero", 1)]
    table = panel.check_view.ops_table
    flagged, plain = table.item(1, 0), table.item(0, 0)
    assert flagged.foreground().color() == QColor(theme.BAD)
    assert "fixed shapes" in flagged.toolTip()
    assert plain.foreground().color() != QColor(theme.BAD) and not plain.toolTip()
    assert "1 data-dependent" in panel.check_view.ops_label.text()
    assert panel.check_view.banner.isVisible()
    assert panel.tabs.tabText(1) == "CPU check · 1 error"
    (label,) = panel.check_view.problem_labels
    assert label.property("severity") == "error" and theme.BAD in label.text()


def test_nan_and_inf_are_highlighted_and_an_unused_input_is_listed_as_dropped(panel):
    report = module_report(
        inputs=[tensor("x", [1, 2, 1]), tensor("y", [3, 3])],
        outputs=[tensor("out", [1, 1], nan=2, inf=1)],
        unused_inputs=["y"],
        problems=[{"severity": "warning", "message": "input 'y' is never used by the traced graph"}],
    )
    panel.show_check(report)
    out = panel.check_view.tensor_tree.topLevelItem(1).child(0)
    assert (out.text(7), out.text(8)) == ("2", "1")
    assert out.foreground(7).color() == QColor(theme.BAD) and out.foreground(8).color() == QColor(theme.BAD)
    x = panel.check_view.tensor_tree.topLevelItem(0).child(0)
    assert x.foreground(7).color() != QColor(theme.BAD)
    lines = _interface_lines(panel)
    assert "Dropped (unused) inputs" in lines and "y: not an input of the NEFF" in lines
    assert panel.check_view.verdict_badge.text() == "CPU check passed: 1 warning"
    (label,) = panel.check_view.problem_labels
    assert label.property("severity") == "warning" and theme.WARN in label.text()


def test_a_check_that_could_not_run_shows_its_error_prominently(panel):
    panel.show_check({"ok": False, "error": "ModuleNotFoundError: No module named 'mymodels'"})
    banner = panel.check_view.banner
    assert banner.isVisible() and "No module named 'mymodels'" in banner.text()
    assert not panel.check_view.splitter.isVisible()
    assert panel.check_view.verdict_badge.text() == "CPU check failed: 1 error"
    # A later good report brings the tables back.
    panel.show_check(module_report())
    assert not banner.isVisible() and panel.check_view.splitter.isVisible()


def test_the_button_asks_for_a_check(panel, qtbot):
    with qtbot.waitSignal(panel.check_requested, timeout=30_000):
        qtbot.mouseClick(panel.check_button, Qt.MouseButton.LeftButton)
    panel.show_check_running()
    assert panel.check_view.verdict_badge.text() == "CPU check: running"


# ---- status and invalid specs ----


def test_show_invalid_keeps_the_previous_plots_and_says_why(panel, qtbot):
    panel.show_preview(two_plots())
    widgets = panel.plot_widgets()
    qtbot.waitUntil(lambda: all(w.isVisible() for w in widgets.values()), timeout=30_000)
    _x, before = panel.grid.cells["Values"].items[0].getOriginalDataset()
    panel.show_invalid("norm.eps: must be greater than 0")
    assert panel.plot_widgets() == widgets
    assert all(w.isVisible() for w in widgets.values())
    _x, after = panel.grid.cells["Values"].items[0].getOriginalDataset()
    np.testing.assert_array_equal(before, after)
    message = panel.message_label
    assert message.isVisible() and theme.BAD in message.styleSheet()
    assert "norm.eps: must be greater than 0" in message.text() and "last valid spec" in message.text()
    assert "RMSNorm: 32 x 64 float32" in message.text()
    # No badge vouches for plots of another spec.
    assert all(theme.GOOD not in b.styleSheet() for b in panel.badges.values())
    # A valid spec again: the message goes, the verdicts come back.
    panel.show_preview(two_plots())
    assert not message.isVisible() and theme.GOOD in panel.badges["max |err|"].styleSheet()


def test_status_before_the_first_preview_replaces_the_placeholder(panel):
    panel.show_status("Loading torch…")
    assert panel.plots_stack.currentWidget() is panel.placeholder
    assert panel.placeholder.text() == "Loading torch…"
    panel.show_preview(two_plots())
    assert panel.plots_stack.currentWidget() is panel.scroll


@pytest.mark.slow  # a probe child (or a fresh interpreter)
def test_the_module_imports_no_torch():
    code = "import sys, neffbench.gui.preview.kernel_panel\nprint('torch' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@pytest.mark.slow  # a probe child (or a fresh interpreter)
def test_a_report_is_not_changed_by_showing_it(panel, rms_norm_report):
    before = copy.deepcopy(rms_norm_report)
    panel.show_check(rms_norm_report)
    assert rms_norm_report == before


def test_a_spec_that_cannot_be_previewed_lists_each_problem_once_on_its_own_line(qtbot):
    from neffbench.gui.preview.controller import PreviewController
    from neffbench.gui.preview.kernel_panel import GenericPreviewPanel
    from neffbench.schema import Problem

    panel = GenericPreviewPanel()
    qtbot.addWidget(panel)
    controller = PreviewController()
    controller.failed.connect(panel.show_invalid)
    problems = [Problem("module.entry", "Set the entry to compile."), Problem("inputs", "No inputs: give one.")]
    controller.reject(problems)
    assert (
        panel.message_label.text()
        == "No preview: module.entry: Set the entry to compile.\ninputs: No inputs: give one."
    )
    assert panel.placeholder.text() == "No preview until the problems above are fixed."
