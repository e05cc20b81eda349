"""The Help menu: the manual in the window (F1), the keyboard shortcuts read from the window itself (Ctrl+?), and
About with the versions and what the toolchain check found."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMessageBox

from neffbench import __version__, manual
from neffbench.gui.shell import help_menu

pytestmark = pytest.mark.gui


def test_the_manual_is_the_readme_section_by_section():
    found = manual.sections(manual.text())
    assert list(found)[0] == "Introduction" and "The window" in found
    assert found["The window"].startswith("## The window\n") and "**Whole log…**" in found["The window"]
    assert manual.sections("intro\n## A\none\n### A.1\ntwo\n## B\nthree\n") == {
        "Introduction": "intro\n",
        "A": "## A\none\n### A.1\ntwo\n",
        "B": "## B\nthree\n",
    }


def test_help_menu_f1_shortcuts_and_about(window, qtbot, monkeypatch):
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus[-1] == "&Help"
    help_actions = [a.text() for a in window.menuBar().actions()[-1].menu().actions()]
    assert help_actions == ["&Manual", "&Keyboard shortcuts", "&About NEFF Workbench"]

    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F1)
    manual_window = window.findChild(help_menu.ManualWindow, "manualWindow")
    assert manual_window is not None and manual_window.isVisible()
    assert manual_window.index.currentItem().text() == "The window"
    assert "Whole log…" in manual_window.page.toPlainText()
    manual_window.close()

    window.shortcuts_action.trigger()
    dialog = window.findChild(QDialog, "shortcutsDialog")
    rows = dict(help_menu.shortcuts(window))
    assert rows["Compile"].startswith("Ctrl+Return") and rows["Manual"] == "F1" and rows["Rescan"] == "F5"
    assert dialog.findChild(help_menu.QTableWidget).rowCount() == len(rows)
    dialog.close()

    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append((title, text)))
    window.about_action.trigger()
    [(title, text)] = shown
    assert title == "About NEFF Workbench" and f"<b>{__version__}</b>" in text and "torch" in text
