"""Layouts that fit a laptop (issue: the window as a new user sees it): at 1280x800 and 1024x700 no
button, label, plot title or stage name is cut, no pane is pushed off the window, and inline problems
under a field are shown whole. Each check looks at every widget of its class, not one instance."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QLabel, QPushButton, QTreeWidget, QVBoxLayout, QWidget

from tests.gui_fixtures import each_tab
from tests.test_gui_compile import compile_and_wait, use_fakes

pytestmark = [pytest.mark.gui]

SIZES = [(1280, 800), (1024, 700)]


def _visible(page: QWidget, cls) -> list:
    return [w for w in page.findChildren(cls) if w.isVisibleTo(page) and w.isVisible()]


def _cut(page: QWidget) -> list[str]:
    """Everything on ``page`` that is not shown whole, as sentences naming it."""
    problems = []
    for button in _visible(page, QAbstractButton):
        if isinstance(button, (QPushButton, QCheckBox)) and button.width() < button.minimumSizeHint().width():
            problems.append(
                f"button {button.text()!r} is {button.width()} px, needs {button.minimumSizeHint().width()}"
            )
    for label in _visible(page, QLabel):
        if (
            type(label) is QLabel
            and label.text()
            and not label.wordWrap()
            and label.width() < label.minimumSizeHint().width()
        ):
            problems.append(
                f"label {label.text()[:40]!r} is {label.width()} px, needs {label.minimumSizeHint().width()}"
            )
        if label.wordWrap() and label.text() and label.height() < label.heightForWidth(label.width()):
            problems.append(
                f"wrapped label {label.text()[:40]!r} is {label.height()} px high, needs "
                f"{label.heightForWidth(label.width())}"
            )
    for view in _visible(page, pg.GraphicsView):
        # A pane pushed past its splitter's or the window's edge is partly outside its visible region.
        shown = view.visibleRegion().boundingRect()
        if shown.width() and shown.width() < view.width() - 1:
            problems.append(
                f"plot view {view.objectName() or type(view).__name__} shows {shown.width()} of {view.width()} px"
            )
        for item in view.scene().items():
            if isinstance(item, pg.PlotItem) and item.isVisible() and item.titleLabel.isVisible():
                title = item.titleLabel.item.boundingRect().width()
                room = item.titleLabel.width()
                if title > room + 1:
                    problems.append(f"plot title {item.titleLabel.text[:40]!r} needs {title:.0f} px, has {room:.0f}")
    for tree in _visible(page, QTreeWidget):
        problems += _elided_names(tree)
    return problems


def _elided_names(tree: QTreeWidget) -> list[str]:
    """First-column texts wider than the column (a stage tree's names, a list's names)."""
    if tree.objectName() != "stages":
        return []
    out, metrics = [], tree.fontMetrics()
    width = tree.header().sectionSize(0)
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    while items:
        item = items.pop()
        depth, parent = 0, item.parent()
        while parent is not None:
            depth, parent = depth + 1, parent.parent()
        needed = metrics.horizontalAdvance(item.text(0)) + tree.indentation() * (depth + 1) + 8
        if needed > width:
            out.append(f"stage {item.text(0)!r} needs {needed} px, column has {width}")
        items += [item.child(i) for i in range(item.childCount())]
    return out


def _check_every_tab(window, qtbot, size) -> dict[str, list[str]]:
    found = {}
    for name, page in each_tab(window, qtbot, size):
        # Nothing needs the window to scroll sideways at this size.
        central = window.centralWidget()
        needed = window.splitter.minimumSizeHint().width()
        cut = _cut(page)
        if needed > central.viewport().width():
            cut.append(f"the window needs {needed} px, has {central.viewport().width()}")
        found[name] = cut
    return found


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_tab_is_whole_on_a_laptop_screen_after_a_compile(window, qtbot, monkeypatch, size):
    use_fakes(monkeypatch, "success")
    window.build_panels()
    window.preview_controller.load_torch()
    window.apply_preset("llama3.1-8b")  # the longest titles and the most legend entries
    qtbot.waitUntil(
        lambda: (
            getattr(window.preview_panel.preview, "spec", None) is not None
            and window.preview_panel.preview.spec.name == "llama3.1-8b"
        ),
        timeout=60_000,
    )
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "succeeded"
    window.artifacts.rescan()
    qtbot.waitUntil(lambda: window.artifacts.list.topLevelItemCount() == 1, timeout=10_000)
    window.artifacts.list.topLevelItem(0).setSelected(True)
    found = _check_every_tab(window, qtbot, size)
    assert found == {name: [] for name in found}


def test_below_its_minimum_the_window_scrolls_instead_of_overlapping(window, qtbot):
    window.build_panels()
    needed = window.splitter.minimumSizeHint()
    window.resize(needed.width() - 200, needed.height() - 150)
    central = window.centralWidget()
    qtbot.waitUntil(lambda: central.horizontalScrollBar().maximum() > 0, timeout=30_000)
    assert central.verticalScrollBar().maximum() > 0
    assert window.splitter.width() >= needed.width()  # the content keeps its size; the window scrolls over it


def test_side_by_side_panes_turn_one_above_the_other_when_narrow(qtbot):
    from PySide6.QtCore import Qt

    from neffbench.gui.widgets.flow import TurningSplitter

    holder = QWidget()  # a window of its own would take the splitter's minimum as the window's
    qtbot.addWidget(holder)
    splitter = TurningSplitter()
    QVBoxLayout(holder).addWidget(splitter)
    for _ in range(2):
        pane = QWidget()
        pane.setMinimumWidth(300)
        splitter.addWidget(pane)
    holder.resize(700, 400)
    holder.show()
    qtbot.waitExposed(holder)
    assert splitter.orientation() == Qt.Orientation.Horizontal
    holder.resize(500, 400)
    qtbot.waitUntil(lambda: splitter.orientation() == Qt.Orientation.Vertical, timeout=30_000)
    # Its minimum width is its widest pane's, so it never sets the window's.
    assert splitter.minimumSizeHint().width() == 300
    holder.resize(700, 400)
    qtbot.waitUntil(lambda: splitter.orientation() == Qt.Orientation.Horizontal, timeout=30_000)
    # A pane whose minimum grows without a resize (a longer plot title) turns it too.
    splitter.widget(0).setMinimumWidth(450)
    qtbot.waitUntil(lambda: splitter.orientation() == Qt.Orientation.Vertical, timeout=30_000)


def test_inline_problems_are_shown_whole_in_a_narrow_scrolled_form(window, qtbot):
    window.build_panels()
    window.resize(1024, 700)
    form = window.form.current()
    window.splitter.setSizes([330, 700])
    editor = window.form.editor("name")
    editor.widget.setText("a-name/with-a-slash-and-no-spaces-that-no-job-directory-can-take-" * 3)
    editor.edited.emit()
    label = form.problem_label("name")
    qtbot.waitUntil(label.isVisible, timeout=30_000)
    form.ensureWidgetVisible(label)
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()), timeout=30_000)
    assert label.width() <= form.viewport().width()  # wrapped inside the form, not past its edge
    assert label.visibleRegion().boundingRect().height() >= label.heightForWidth(label.width()) - 1


def test_a_status_message_is_never_crowded_out_by_the_toolchain_summary(window, qtbot):
    window.build_panels()
    window.resize(1024, 700)
    status = window.doctor_status
    status.toolchain.setText(
        "● Neuron toolchain: torch_neuronx 2.9.0.2.15.32035 (legacy), neuronx-cc 2.21.33363.0 "
        "and a very long tail that no narrow window can show in full"
    )
    assert status.toolchain.text().endswith("in full")  # the whole line is still what it says
    bar = window.statusBar()
    assert bar.minimumSizeHint().width() < 1024  # the summary gives way, never widens the window
    message = "Copied the path of graph.neff."
    bar.showMessage(message, 5000)
    # The summary is permanent: the message shows on its left, with room for the whole sentence.
    qtbot.waitUntil(lambda: status.isVisible() and status.x() > 0, timeout=30_000)
    assert status.x() - 8 >= bar.fontMetrics().horizontalAdvance(message)
    assert status.geometry().right() <= bar.width()
    bar.clearMessage()
    assert status.isVisible()


def test_a_first_launch_fits_the_screen(window):
    # No saved geometry: the window is no larger than the screen it opens on (offscreen: 800x800).
    room = window.screen().availableGeometry()
    assert window.width() <= room.width() and window.height() <= room.height()
