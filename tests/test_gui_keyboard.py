"""The window by keyboard alone: every menu item has a mnemonic of its own in its menu, Tab runs from the kernel
chooser through the form to the toolbar's actions and then the tabs, and F6 reaches the toolbar."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu

from neffbench.gui.shell.mnemonics import marked, mnemonic

pytestmark = pytest.mark.gui


def _menus(menu: QMenu, path: str = ""):
    yield path or menu.title(), menu
    for action in menu.actions():
        if action.menu() is not None:
            yield from _menus(action.menu(), f"{path or menu.title()} ▸ {action.text()}")


def test_mnemonics_are_chosen_free_and_never_from_an_escaped_ampersand():
    assert mnemonic("&Open spec…") == "o" and mnemonic("Rock && roll") is None and mnemonic("S&weep") == "w"
    taken = {"m"}
    assert marked("Meta Llama 3 8B", taken) == "Meta &Llama 3 8B"
    assert marked("Q && A", {"q"}) == "Q && &A"
    assert marked("&Quit", set()) == "&Quit"  # one already chosen is kept
    assert marked("ab", {"a", "b"}) == "ab"  # no letter free: the arrow keys still reach it


def test_every_menu_item_has_a_mnemonic_no_other_item_of_its_menu_has(window):
    bar = [action.text() for action in window.menuBar().actions()]
    assert bar == ["&File", "&Compile", "&Help"]
    clashes, missing = [], []
    for where, menu in (m for action in window.menuBar().actions() for m in _menus(action.menu())):
        letters = {}
        for action in menu.actions():
            if action.isSeparator():
                continue
            letter = mnemonic(action.text())
            if letter is None:
                missing.append(f"{where} ▸ {action.text()}")
            elif letter in letters:
                clashes.append(f"{where}: {letters[letter]!r} and {action.text()!r} both {letter!r}")
            letters.setdefault(letter, action.text())
    assert missing == [] and clashes == []
    # The toolbar's buttons and the tooltips show the words alone.
    assert window.compile_button.text() == "Compile" and "&" not in window.quit_action.toolTip()


def _focused_by_tab(window, qtbot, start, stop, limit: int = 200) -> list:
    """The widgets Tab gives the keyboard to, from ``start`` until ``stop`` has it."""
    start.setFocus()
    qtbot.waitUntil(start.hasFocus, timeout=10_000)
    seen = []
    for _ in range(limit):
        widget = QApplication.focusWidget()
        seen.append(widget)
        if widget is stop:
            return seen
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
    raise AssertionError(f"Tab never reached {stop!r}: {[w.objectName() for w in seen]}")


def _next_stop(widget):
    """The next widget in the chain Tab could stop at."""
    widget = widget.nextInFocusChain()
    while not (widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isVisible()) or widget.focusProxy():
        widget = widget.nextInFocusChain()
    return widget


def _in_form(window, widget) -> bool:
    return window.form.current().isAncestorOf(widget) or widget is window.form.current()


@pytest.mark.parametrize("preset", ["seed", "qwen2-7b-rms-norm"])  # the first form, and one built on a switch
def test_tab_runs_from_the_kernel_chooser_through_the_form_to_the_actions(window, qtbot, preset):
    window.build_panels()
    window.resize(1280, 800)
    window.apply_preset(preset)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    qtbot.waitUntil(window.compile_action.isEnabled, timeout=30_000)
    # The order is arranged when the event loop is back from the switch (the new form is built by then).
    qtbot.waitUntil(lambda: _in_form(window, _next_stop(window.form.kernel_combo)), timeout=10_000)
    tab_bar = window.tabs.tabBar()
    seen = _focused_by_tab(window, qtbot, window.form.kernel_combo, tab_bar)
    names = [w.objectName() or w.metaObject().className() for w in seen]
    assert seen[0] is window.form.kernel_combo
    in_form = [_in_form(window, w) for w in seen]
    last_field = max(i for i, inside in enumerate(in_form) if inside)
    assert all(in_form[1 : last_field + 1]), names  # the form's fields, and nothing else, after the chooser
    assert window.form.editor("inputs.num_tokens").widget in seen[1:last_field]
    after = seen[last_field + 1 :]
    assert after[0] is window.compile_button, names  # then the actions: Compile first (Cancel is greyed out)
    buttons = [window.toolbar.widgetForAction(a) for a in (window.sweep_action, window.open_action, window.save_action)]
    assert after[1:4] == buttons and window.workdir_edit in after and after[-1] is tab_bar, names


def test_f6_takes_the_keyboard_to_the_toolbar_and_every_toolbar_action_is_in_a_menu(window, qtbot):
    window.build_panels()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    qtbot.waitUntil(window.compile_action.isEnabled, timeout=30_000)
    window.form.editor("name").widget.setFocus()
    qtbot.keyClick(window.form.editor("name").widget, Qt.Key.Key_F6)
    assert QApplication.focusWidget() is window.compile_button
    qtbot.keyClick(window.compile_button, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is window.toolbar.widgetForAction(window.sweep_action)
    in_menus = {a for action in window.menuBar().actions() for _, m in _menus(action.menu()) for a in m.actions()}
    toolbar = [a for a in window.toolbar.actions() if not a.isSeparator() and a.text().strip()]
    assert {a for a in toolbar if a.isVisible() and not a.text().startswith(" ")} <= in_menus | {
        a for a in toolbar if window.toolbar.widgetForAction(a) in (window.workdir_edit,)
    }
    assert window.presets_menu.menuAction() in in_menus and window.workdir_action in in_menus
    assert dict(_shortcut_sheet(window))["Go to the toolbar"] == "F6"


def _shortcut_sheet(window):
    from neffbench.gui.shell.help_menu import shortcuts

    return shortcuts(window)
