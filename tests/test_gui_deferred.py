"""The plots of a tab not shown yet are made when first needed (widgets/deferred.py): on the first show of one of
their views, or on the first data to draw, whichever comes first; made either way they draw what they would have
drawn, and their views, made at once, lay the tab out as before."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QHBoxLayout, QWidget

from neffbench.gui.widgets.deferred import PLOT_METHODS, Deferred, DeferredPlotWidget
from neffbench.gui.widgets.plot_boxes import plot_item

pytestmark = [pytest.mark.gui]
# What the Run, Numerics and Sweeps tabs draw on their first show (the Run tab's latency page is its first).
LATER = {"run-histogram", "run-timeline", "numerics-values", "numerics-difference", "sweep-chart"}


def _with_plots(window) -> set[str]:
    """The names of the window's plot views that have their plot."""
    return {view.objectName() for view in window.findChildren(pg.PlotWidget) if view.getPlotItem() is not None}


def test_a_deferred_view_is_a_plot_widget_once_given_its_plot(qtbot):
    view, plain = DeferredPlotWidget(), pg.PlotWidget()
    for widget in (view, plain):
        qtbot.addWidget(widget)
    assert view.getPlotItem() is None
    assert (view.sizeHint(), view.minimumSizeHint(), view.sizePolicy()) == (
        plain.sizeHint(),
        plain.minimumSizeHint(),
        plain.sizePolicy(),
    )
    plot = plot_item()
    view.set_plot(plot)
    # What PlotWidget points at its plot, by pyqtgraph's own list.
    pointed = {name for name, value in vars(plain).items() if getattr(value, "__self__", None) is plain.getPlotItem()}
    assert pointed == set(PLOT_METHODS)
    curve = pg.PlotDataItem([0, 1], [2, 3])
    view.addItem(curve)
    assert view.getPlotItem() is plot and plot.listDataItems() == [curve] and curve.scene() is view.scene()


def test_the_plots_are_made_once_on_the_first_show_of_a_view_or_when_asked(qtbot):
    made = []
    holder = QWidget()
    qtbot.addWidget(holder)
    views = [DeferredPlotWidget(), DeferredPlotWidget()]
    row = QHBoxLayout(holder)
    for view in views:
        row.addWidget(view)
    views[1].hide()
    deferred = Deferred(lambda: made.append([view.set_plot(plot_item()) for view in views]), *views)
    assert not deferred.made
    holder.show()
    qtbot.waitExposed(holder)
    assert deferred.made and len(made) == 1 and all(view.getPlotItem() is not None for view in views)
    views[1].show()
    deferred.make()
    assert len(made) == 1
    asked = Deferred(lambda: made.append("asked"), DeferredPlotWidget())
    asked.make()
    assert asked.made and made[-1] == "asked"


def test_the_tabs_plots_are_made_on_the_tabs_first_show_and_draw_their_empty_state(window, qtbot):
    from neffbench.gui.shell.tabs import NUMERICS_TAB, RUN_TAB, SWEEPS_TAB

    window.build_panels()
    assert LATER <= {view.objectName() for view in window.findChildren(pg.PlotWidget)}  # laid out at once
    assert not _with_plots(window) & LATER  # the window shows the Preview tab
    for tab in (RUN_TAB, NUMERICS_TAB, SWEEPS_TAB):
        window.tabs.setCurrentIndex(tab)
        qtbot.waitUntil(window.tabs.widget(tab).isVisible, timeout=10_000)
    assert _with_plots(window) >= LATER
    panels = window.panels
    assert "no run selected" in panels.run.latency.histogram.getPlotItem().titleLabel.text
    assert not panels.run.buckets.plots.made  # on the Run tab's Buckets page, not shown yet
    assert panels.numerics.detail.device_curve.getData()[0] is None
    sweeps = panels.sweeps.panel
    assert sweeps.series == [] and "No sweep" in sweeps.empty_text.textItem.toPlainText()


def test_plots_not_shown_yet_are_made_by_the_first_data_to_draw(qtbot):
    from neffbench.gui.run.plots import BucketPlots, LatencyPlots

    plots = LatencyPlots()
    qtbot.addWidget(plots)
    plots.show_runs([])
    assert not plots.plots.made
    plots.show_runs([{"durations_ms": [1.0, 1.1, 1.2, 9.0], "runtime": "cpu"}])
    assert plots.plots.made and plots.histogram_counts()[1].sum() == 4
    assert "CPU" in plots.histogram.getPlotItem().titleLabel.text
    plots.show()
    qtbot.waitExposed(plots)
    assert plots.histogram_counts()[1].sum() == 4  # not drawn again empty
    buckets = BucketPlots()
    qtbot.addWidget(buckets)
    buckets.show_curve([{"bucket": {"num_tokens": 8}, "items_per_call": 8, "job_dir": "j8", "run": None}], "cpu")
    assert buckets.plots.made and "no runs yet" in buckets.latency.getPlotItem().titleLabel.text
    assert buckets.latency.getPlotItem().getAxis("bottom").labelText == "items per call (tokens)"
