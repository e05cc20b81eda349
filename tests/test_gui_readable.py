"""Panes that keep their content readable (widgets/readable.py): at 1920x1080, 1280x800 and 1024x700 every
plot keeps a data area its tick labels fit in (the pane scrolls instead), integer quantities get integer
ticks, an empty pane takes no room from the log, each kernel's form has its own width, and cut text is
elided with the whole of it in a tooltip."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QFont, QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip, QTreeWidget, QTreeWidgetItem, QWidget

from neffbench.gui.widgets import readable
from neffbench.gui.widgets.readable import IntegerAxis, data_height, elide_with_tooltips, plot_height
from tests.gui_fixtures import each_tab

pytestmark = [pytest.mark.gui]

SIZES = [(1920, 1080), (1280, 800), (1024, 700)]


@pytest.fixture
def seed_workdir(compiled, tmp_path):
    """A workdir of this test's own holding one cpu-check job of the seed, made as a user makes it (the CLI)."""
    [job] = compiled.jobs(tmp_path, "seed", "--backend", "cpu-check")
    return job.parent, job


# ---- the helpers, alone ------------------------------------------------------------------------


def _ticks(axis: IntegerAxis, lo: float, hi: float, size: float = 400) -> list[float]:
    return [v for _spacing, values in axis.tickValues(lo, hi, size) for v in values]


@pytest.mark.parametrize("span", [(0, 3), (0, 1.5), (-0.4, 0.4), (1, 131072), (7.2, 9.9)])
def test_an_integer_axis_ticks_only_whole_numbers_however_far_zoomed(qtbot, span):
    axis = IntegerAxis("bottom")
    ticks = _ticks(axis, *span)
    assert all(float(v).is_integer() for v in ticks), ticks
    assert ticks or span[1] - span[0] < 1  # a span holding a whole number shows it
    axis.set_whole(False)
    if span == (0, 1.5):
        assert not all(float(v).is_integer() for v in _ticks(axis, *span))  # a plain axis is unchanged


def test_a_kernel_plots_integer_data_get_integer_ticks(qtbot):
    from neffbench.gui.preview.plots import PlotCell, whole_numbers
    from neffbench.kernels.plots import Plot, Series, histogram

    tokens = Plot("Per token", "curve", "token", "error", [Series("e", np.arange(3), np.array([0.1, 0.3, 0.2]))])
    values = Plot("Values", "histogram", "value", "count", [histogram("v", np.random.default_rng(0).normal(size=99))])
    assert whole_numbers(tokens, "x") and not whole_numbers(tokens, "y")
    assert whole_numbers(values, "y") and not whole_numbers(values, "x")
    cell = PlotCell("Per token")
    qtbot.addWidget(cell)
    cell.set_plot(tokens)
    assert cell.plot_item.getAxis("bottom").whole and not cell.plot_item.getAxis("left").whole
    cell.set_plot(values)
    assert cell.plot_item.getAxis("left").whole and not cell.plot_item.getAxis("bottom").whole


def test_the_readable_height_follows_the_font(qtbot):
    small, large = QFont(QApplication.font()), QFont(QApplication.font())
    small.setPointSizeF(8)
    large.setPointSizeF(16)
    assert plot_height(1, font=large) > 1.8 * plot_height(1, font=small)
    assert plot_height(2, lines=1) > 2 * plot_height(1) > 2 * data_height()
    view = pg.PlotWidget()
    qtbot.addWidget(view)
    readable.keep_readable(view, plots=2)
    assert view.minimumHeight() == plot_height(2)


# ---- the window at each size -------------------------------------------------------------------


def _shown_plots(page: QWidget) -> list[pg.PlotItem]:
    plots = []
    for view in page.findChildren(pg.GraphicsView):
        if view.isVisible():
            items = view.scene().items()
            plots += [
                i for i in items if type(i) is not pg.ColorBarItem and isinstance(i, pg.PlotItem) and i.isVisible()
            ]
    return plots


def _squeezed(page: QWidget) -> list[str]:
    """Plots on ``page`` whose data area is shorter than the readable minimum (their y tick labels crowd)."""
    least = data_height()
    out = []
    for plot in _shown_plots(page):
        title = plot.titleLabel.text if plot.titleLabel.isVisible() else plot.getAxis("left").labelText
        if plot.vb.height() < least - 1:
            out.append(f"{title[:40]!r}: data area {plot.vb.height():.0f} px, needs {least}")
        bottom = plot.getAxis("bottom")
        if bottom.isVisible() and bottom.height() < readable.line_height():
            out.append(f"{title[:40]!r}: bottom axis {bottom.height():.0f} px")
    return out


def _on_every_tab(window, qtbot, size) -> dict[str, list[str]]:
    found = {}
    for name, page in each_tab(window, qtbot, size):
        qtbot.waitUntil(lambda p=page: all(plot.vb.height() > 0 for plot in _shown_plots(p)), timeout=30_000)
        found[name] = _squeezed(page)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_plot_keeps_a_readable_height_at_each_window_size(make_window, qtbot, seed_workdir, size):
    workdir, job = seed_workdir
    window = make_window(workdir=workdir)
    window.preview_controller.load_torch()
    window.apply_preset("llama3.1-8b")  # the heatmaps that once shrank to 25 px
    qtbot.waitUntil(lambda: getattr(window.preview_panel.preview, "spec", None) is not None, timeout=60_000)
    window.panels.run.set_target(str(job))
    window.panels.numerics.set_job(str(job))
    found = _on_every_tab(window, qtbot, size)
    assert found == {name: [] for name in found}
    # What does not fit is scrolled to, not squeezed: the Preview's plots are taller than its page.
    if size[1] <= 800:
        scroll = window.preview_panel.plots
        assert scroll.verticalScrollBar().maximum() > 0


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES[1:], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_kernels_plot_grid_keeps_a_readable_height(make_window, qtbot, size):
    from neffbench.kernels import registry

    window = make_window()
    window.preview_controller.load_torch()
    generic = [k.name for k in registry.available() if not k.gui_preview and not k.gui_form]  # the plot grid
    for name in generic:
        window.form.set_spec(registry.get(name).default_spec())
        qtbot.waitUntil(lambda: getattr(window.preview_panel, "preview", None) is not None, timeout=60_000)
        window.tabs.setCurrentIndex(0)
        window.resize(*size)
        qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=30_000)
        qtbot.waitUntil(lambda: len(_shown_plots(window.preview_panel)) > 0, timeout=30_000)
        assert _squeezed(window.preview_panel) == [], name


# ---- the Compile tab: an empty pane takes no room ----------------------------------------------


def test_an_empty_error_code_pane_takes_no_width_from_the_log(qtbot):
    from neffbench.gui.compile.log_view import LogView

    view = LogView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    assert not view.codes_pane.isVisible()
    assert view.text.width() >= view.splitter.width() - 2  # the whole width is the log's
    view.add_error_code("NCC_EOOM001", "out of memory")
    qtbot.waitUntil(view.codes_pane.isVisible, timeout=30_000)
    assert 0 < view.codes_pane.width() < view.text.width()
    view.clear()
    qtbot.waitUntil(lambda: not view.codes_pane.isVisible(), timeout=30_000)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_compile_tab_gives_the_log_the_room(make_window, qtbot, size):
    window = make_window()
    window.resize(*size)
    window.tabs.setCurrentIndex(1)
    panel = window.panels.compile
    qtbot.waitUntil(
        lambda: panel.log_view.text.isVisible() and (window.width(), window.height()) == size, timeout=30_000
    )
    split = panel.splitter
    horizontal = split.orientation() == Qt.Orientation.Horizontal
    qtbot.waitUntil(
        lambda: (
            (panel.log_tabs.width() if horizontal else panel.log_tabs.height())
            > (panel.stages.width() if horizontal else panel.stages.height())
        ),
        timeout=5_000,
    )
    assert panel.log_view.text.width() >= panel.log_view.splitter.width() - 2


# ---- the form: each kernel its own width --------------------------------------------------------


def _kernel_with_a_wide_form():
    from neffbench.kernels import registry

    return next(k for k in registry.available() if k.gui_form)


def test_each_kernel_form_gets_its_own_width(make_window, qtbot):
    from neffbench.kernels import registry
    from neffbench.presets import load_preset

    window = make_window()
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=30_000)
    form, splitter = window.form, window.splitter
    first = splitter.sizes()[0]
    narrow = form.minimumSizeHint().width()
    wide = _kernel_with_a_wide_form()
    form.set_spec(wide.default_spec())
    qtbot.waitUntil(lambda: splitter.sizes()[0] > first, timeout=30_000)
    widened = splitter.sizes()[0]
    assert widened <= sum(splitter.sizes()) // 2  # the tabs keep at least half
    window.apply_preset("seed")
    qtbot.waitUntil(lambda: splitter.sizes()[0] == first, timeout=30_000)
    # The stack of forms asks for the form shown, not for the widest one ever shown.
    qtbot.waitUntil(lambda: form.minimumSizeHint().width() == narrow, timeout=30_000)
    # A width the user chose is the kernel's own too, and kept apart from the other kernel's.
    splitter.setSizes([first + 40, sum(splitter.sizes()) - first - 40])
    form.set_spec(wide.default_spec())
    qtbot.waitUntil(lambda: splitter.sizes()[0] == widened, timeout=30_000)
    form.set_spec(registry.get(registry.DEFAULT).default_spec())
    qtbot.waitUntil(lambda: splitter.sizes()[0] == first + 40, timeout=30_000)
    assert load_preset("seed").kernel == registry.DEFAULT


def test_a_kernels_form_width_is_kept_between_sessions(make_window, qtbot):
    from neffbench.kernels import registry

    window = make_window()
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=30_000)
    splitter = window.splitter
    splitter.setSizes([420, sum(splitter.sizes()) - 420])
    wide = _kernel_with_a_wide_form()
    window.form.set_spec(wide.default_spec())
    qtbot.waitUntil(lambda: splitter.sizes()[0] != 420, timeout=30_000)
    splitter.setSizes([450, sum(splitter.sizes()) - 450])
    window.save_settings()
    again = make_window()  # the same settings: the next session
    again.resize(1280, 800)
    qtbot.waitUntil(lambda: again.width() == 1280, timeout=30_000)
    assert again.form.kernel == wide.name and again.splitter.sizes()[0] == 450
    again.form.set_spec(registry.get(registry.DEFAULT).default_spec())
    qtbot.waitUntil(lambda: again.splitter.sizes()[0] == 420, timeout=30_000)


# ---- cut text: elided, with the whole of it in a tooltip ---------------------------------------

LONG = "succeeded, after a warm-up of 5 calls and 1,000 timed iterations on the cpu runtime (CPU figures)"


@pytest.fixture
def tree(qtbot):
    tree = QTreeWidget()
    tree.setHeaderLabels(["Outcome of the run, as recorded in its record", "Short"])
    tree.setColumnWidth(0, 120)
    tree.resize(300, 200)
    qtbot.addWidget(tree)
    elide_with_tooltips(tree)
    tree.show()
    qtbot.waitExposed(tree)
    return tree


def test_a_cut_cell_has_its_whole_text_in_its_tooltip(tree):
    cut = QTreeWidgetItem([LONG, "ok"])
    cut.setToolTip(0, "the run's record: runs/x.json")
    whole = QTreeWidgetItem(["ok", "ok"])
    tree.addTopLevelItems([cut, whole])
    delegate = tree.itemDelegate()
    index = tree.indexFromItem(cut, 0)
    assert delegate.tooltip_for(tree, index) == f"{LONG}\n\nthe run's record: runs/x.json"
    assert delegate.tooltip_for(tree, tree.indexFromItem(whole, 0)) is None  # shown whole: no tooltip
    assert delegate.tooltip_for(tree, tree.indexFromItem(cut, 1)) is None
    # As a user gets it: hovering the cell.
    centre = tree.visualRect(index).center()
    event = QHelpEvent(QEvent.Type.ToolTip, centre, tree.viewport().mapToGlobal(centre))
    QApplication.sendEvent(tree.viewport(), event)
    assert QToolTip.text().startswith(LONG)
    # Wide enough, the same cell needs no tooltip for its text; its own tooltip stays.
    tree.setColumnWidth(0, 900)
    assert delegate.tooltip_for(tree, index) == "the run's record: runs/x.json"


def test_a_cut_header_has_its_whole_title_in_its_tooltip(tree):
    header = tree.header()
    tips = next(c for c in header.children() if isinstance(c, readable._HeaderTips))
    x = header.sectionViewportPosition(0) + 10
    assert tips.tooltip_at(x) == "Outcome of the run, as recorded in its record"
    assert tips.tooltip_at(header.sectionViewportPosition(1) + 10) is None
    event = QHelpEvent(QEvent.Type.ToolTip, QPoint(x, 5), header.viewport().mapToGlobal(QPoint(x, 5)))
    QApplication.sendEvent(header.viewport(), event)
    assert QToolTip.text() == "Outcome of the run, as recorded in its record"


def test_the_item_views_that_cut_text_elide_it_with_tooltips(make_window):
    from neffbench.gui.widgets.readable import ElidingDelegate

    window = make_window()
    views = {
        "run history": window.panels.run.table,
        "sweep diff": window.panels.sweeps.panel.diff,
        "sweep table": window.panels.sweeps.panel.table,
        "stages (and a sweep's rows)": window.panels.compile.stages,
        "compile results": window.panels.compile.results,
        "artifacts": window.panels.artifacts.list,
    }
    assert {name: type(view.itemDelegate()) for name, view in views.items()} == dict.fromkeys(views, ElidingDelegate)


def test_the_explanation_headline_has_the_panes_whole_width(qtbot):
    from neffbench.gui.explain.view import ExplanationView

    view = ExplanationView()
    qtbot.addWidget(view)
    view.resize(420, 400)
    view.show()
    qtbot.waitExposed(view)
    view.show_data({"outcome": "failed", "headline": "The compiler ran out of memory " * 3, "source": "job.log"})
    qtbot.waitUntil(lambda: view.headline.width() >= view.width() - 2, timeout=30_000)
    assert view.headline.height() < 6 * view.headline.fontMetrics().lineSpacing()  # not a tall red column
