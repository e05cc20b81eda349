"""Fixtures for the GUI tests: a workbench window with settings of its own, closed and drained afterwards; the
spec form alone."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest


@pytest.fixture
def settings_path(tmp_path) -> Path:
    return tmp_path / "settings.ini"


@pytest.fixture
def make_window(qtbot, tmp_path, settings_path):
    """``make_window(background=False)`` opens a window; each is closed, and the worker pool drained, at teardown."""
    from neffbench.gui.shell.gc_guard import MainThreadGC
    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings
    from neffbench.gui.widgets import background, theme

    theme.configure_plots()
    collector = MainThreadGC()  # as the application does: a worker thread never deletes a widget
    windows = []

    def make(*, background: bool = False, workdir: Path | None = None, show: bool = True) -> MainWindow:
        window = MainWindow(Settings.at(settings_path), background=background)
        qtbot.addWidget(window)
        if workdir is not None or not windows:
            window.set_workdir(workdir or tmp_path / "workdir", rescan=False)
        if show:
            window.show()
            qtbot.waitExposed(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        if window.controllers.compile.is_running:
            window.controllers.compile.cancel()
            qtbot.waitUntil(lambda w=window: not w.controllers.compile.is_running, timeout=30_000)
    # Background calls report to widgets: let them finish and report before the widgets go.
    qtbot.waitUntil(lambda: background.running() == 0, timeout=30_000)
    collector.stop()
    # What outlived the window's closing collection (modules imported since, session fixtures) lives as long as the
    # test process: frozen, the next window's closing collection walks only what the tests after this one make.
    gc.freeze()


@pytest.fixture
def window(make_window):
    return make_window()


@pytest.fixture
def form(qtbot):
    """The spec form alone (the window's left column, its default preset in it), shown: for tests of the form that
    need none of the window's tabs, whose building is most of a window's second."""
    from neffbench.gui.forms.kernel_forms import KernelForms
    from neffbench.gui.shell.tabs import DEFAULT_PRESET
    from neffbench.presets import load_preset

    form = KernelForms()
    form.setMinimumWidth(330)  # as the window sets it
    qtbot.addWidget(form)
    form.set_spec(load_preset(DEFAULT_PRESET))
    form.show()
    qtbot.waitExposed(form)
    return form


def each_tab(window, qtbot, size: tuple[int, int]):
    """The window resized to ``size``, then each tab in turn brought up and laid out: yields (its name, its page)."""
    from PySide6.QtWidgets import QWidget

    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=30_000)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        page = window.tabs.widget(index)
        qtbot.waitUntil(page.isVisible, timeout=30_000)
        for widget in [window, *page.findChildren(QWidget)]:
            if widget.layout() is not None:
                widget.layout().activate()
        yield window.tabs.tabText(index).replace("&", ""), page
