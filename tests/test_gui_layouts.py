"""Layouts that fit a laptop (issue: the window as a new user sees it): at 1280x800 and 1024x700 no
button, label, plot title or stage name is cut, no pane is pushed off the window, and inline problems
under a field are shown whole. Each check looks at every widget of its class, not one instance."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QGraphicsView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from tests import test_gui_structure
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
    window.panels.artifacts.rescan()
    qtbot.waitUntil(lambda: window.panels.artifacts.list.topLevelItemCount() == 1, timeout=10_000)
    window.panels.artifacts.list.topLevelItem(0).setSelected(True)
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


# ---- the status bar and the Structure tab at each size -----------------------------------------


def _facts(*, toolchain: bool, devices: tuple[str, ...] = ()):
    from neffbench.toolchain.facts import Component, Facts

    c = Component
    return Facts(
        python=c("python", True, "3.11"),
        torch=c("torch", True, "2.9.0"),
        pyside6=c("PySide6", True, "6.8"),
        pyqtgraph=c("pyqtgraph", True, "0.13"),
        torch_neuronx=c("torch_neuronx", toolchain, "2.9.0.2.15.32035" if toolchain else None),
        neuronx_cc=c("neuronx-cc", toolchain, "2.21.33363.0" if toolchain else None),
        devices=list(devices),
        torch_neuronx_flavour="legacy" if toolchain else None,
    )


def _status_problems(window) -> list[str]:
    """Status-bar items off the window, or cut without their whole line at hand (shown, or in the tooltip)."""
    from neffbench.gui.shell.toolchain_status import FittedLabel

    bar, problems = window.statusBar(), []
    if not bar.isVisible() or not window.rect().contains(bar.geometry()):
        problems.append(f"the status bar at {bar.geometry()} is not inside the window's {window.rect()}")
    for label in _visible(bar, QLabel):
        place = label.geometry().translated(label.parentWidget().mapTo(window, label.parentWidget().rect().topLeft()))
        if not window.rect().contains(place):
            problems.append(f"status item {label.text()[:40]!r} at {place} is off the window")
        if isinstance(label, FittedLabel):
            shown = label.shown()
            if "…" in shown or label.fontMetrics().horizontalAdvance(shown) > label.width():
                problems.append(f"status item {label.text()!r} is cut to {shown!r}")
            if label.text() not in label.toolTip():
                problems.append(f"status item {shown!r} has not its whole line {label.text()!r} in its tooltip")
        elif label.text() and label.width() < label.minimumSizeHint().width():
            problems.append(
                f"status item {label.text()!r} is {label.width()} px, needs {label.minimumSizeHint().width()}"
            )
    return problems


@pytest.mark.parametrize("toolchain", [False, True], ids=["no-toolchain", "legacy-toolchain"])
def test_the_status_bar_is_on_the_window_and_nothing_in_it_is_cut(make_window, qtbot, toolchain):
    window = make_window()
    second = make_window(workdir=window.workdir)  # its status bar has one item more: "Second window on this workdir"
    for shown in (window, second):
        shown.doctor_status.show_facts(_facts(toolchain=toolchain, devices=("/dev/neuron0", "/dev/neuron1")))
        for size in SIZES:  # each screen in turn (a layout follows the size it is given, not the sizes before it)
            shown.resize(*size)
            qtbot.waitUntil(lambda w=shown, s=size: (w.width(), w.height()) == s, timeout=30_000)
            assert _settled(qtbot, lambda w=shown: _status_problems(w)) == [], size


def _settled(qtbot, problems) -> list[str]:
    """``problems()`` once the layouts have settled on none, or what it still says after a while."""
    try:
        qtbot.waitUntil(lambda: not problems(), timeout=5_000)
    except qtbot.TimeoutError:
        pass
    return problems()


def test_a_click_on_the_toolchain_summary_shows_every_line_whole(window, qtbot, monkeypatch):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    status = window.doctor_status
    status.show_facts(_facts(toolchain=False))
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: status.toolchain.shown() != status.toolchain.text(), timeout=30_000)
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    qtbot.mouseClick(status, Qt.MouseButton.LeftButton, pos=status.toolchain.geometry().center())
    [text] = shown
    assert "Neuron toolchain: not found (torch_neuronx, neuronx-cc missing)" in text
    assert "Compiles: cpu-check (CPU trace only, no NEFF)" in text and "Neuron device: none" in text
    window.about_action.trigger()  # the same, by keyboard: Help ▸ About (Alt+H, A)
    assert shown[1] == text


def test_a_first_launch_leaves_room_for_the_title_bar(window):
    from neffbench.gui.shell.restore import frame_allowance

    # Without it a window as high as a 700-px screen had its status bar below the screen's edge.
    room = window.screen().availableGeometry()
    assert window.height() + frame_allowance(window).height() <= room.height()
    assert frame_allowance(window).height() >= 2 * window.fontMetrics().height()


@pytest.fixture
def structure_job(tmp_path):
    """The Structure tab's tests' job: a structure, a compare with a first divergent layer, a profile."""
    return test_gui_structure.job.__wrapped__(tmp_path)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_structure_tab_is_whole_on_a_laptop_screen(window, qtbot, structure_job, size):
    from neffbench.gui.shell.tabs import STRUCTURE_TAB

    window.build_panels()
    with qtbot.waitSignal(window.panels.structure.drawn, timeout=30_000):
        window.panels.structure.set_job(str(structure_job))
    window.tabs.setCurrentIndex(STRUCTURE_TAB)
    found = dict(_check_every_tab(window, qtbot, size))
    page = window.tabs.widget(STRUCTURE_TAB)
    problems = found[window.tabs.tabText(STRUCTURE_TAB).replace("&", "")]
    if page.minimumSizeHint().width() > page.width():
        problems.append(f"the tab needs {page.minimumSizeHint().width()} px, has {page.width()}")
    for view in _visible(page, QGraphicsView):
        shown = view.visibleRegion().boundingRect()
        if shown.width() < view.width() - 1 or shown.height() < view.height() - 1:
            problems.append(f"view {view.objectName() or type(view).__name__} shows {shown.size()} of {view.size()}")
    assert problems == []
