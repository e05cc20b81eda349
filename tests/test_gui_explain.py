"""The window's explanation of a compiler log: after a failed compile, for a job in Artifacts, for a dropped
file; a code's help on click; Save bug report."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from tests.test_gui_compile import compile_and_wait, use_fakes

pytestmark = [pytest.mark.gui]
CORPUS = Path(__file__).parent / "data" / "compiler_logs"


def test_a_dropped_log_is_explained_and_its_code_shows_help(window, qtbot):
    window.build_panels()
    window.drops.handle(str(CORPUS / "job_log_neffbench.log"))
    view = window.compile_panel.explanation
    assert window.compile_panel.log_tabs.currentWidget() is view
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert view.data["first_error"]["code"] == "NCC_EOOM001"
    assert "Failed" in view.headline.text() and "NCC_EOOM001" in view.headline.text()
    html = view.body.toHtml()
    assert "code:NCC_EOOM001" in html and "Passes:" in html
    view._on_body_anchor_clicked(QUrl("code:NCC_EOOM001"))
    assert view.code_help.isVisible() or not view.isVisible()
    assert "EOOM001.html" in view.code_help.text()
    view.show_code("NCC_EZZZ999")
    assert "not in the table shipped with neffbench" in view.code_help.text()
    assert not view.report_button.isEnabled()  # a loose log file: no job to bundle


def test_the_file_menu_explains_a_chosen_log(window, qtbot, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    window.build_panels()
    file_menu = window.menuBar().actions()[0].menu()
    assert window.explain_action in file_menu.actions()
    asked = []

    def pick(parent, title, folder, filters):
        asked.append(title)
        return str(CORPUS / "job_log_neffbench.log"), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", pick)
    window.explain_action.trigger()
    view = window.compile_panel.explanation
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert asked == ["Explain a compiler log"]
    assert view.data["first_error"]["code"] == "NCC_EOOM001"
    assert window.compile_panel.log_tabs.currentWidget() is view
    assert window.tabs.currentWidget() is window.compile_panel.parentWidget()


def test_a_dropped_spec_opens_in_the_form(window, tmp_path):
    window.build_panels()
    spec = tmp_path / "mine.toml"
    from neffbench.presets import preset_text

    spec.write_text(preset_text("seed"))
    window.drops.handle(str(spec))
    assert window.current_spec().name == "seed"


@pytest.mark.slow
def test_a_failed_compile_is_explained_and_bundled(window, qtbot, monkeypatch, tmp_path):
    use_fakes(monkeypatch, "compile-error")
    window.apply_preset("seed")
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "failed"
    panel = window.compile_panel
    view = panel.explanation
    assert panel.log_tabs.currentWidget() is view
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert view.data["first_error"]["code"] == "NLA001"
    assert view.report_button.isEnabled()
    saver = window.bug_reports
    told = []
    out = tmp_path / "report.zip"
    saver.ask_path = lambda suggested: (told.append(suggested), str(out))[1]
    saver.tell = lambda title, text, *, error: told.append((title, text, error))
    view.report_button.click()
    qtbot.waitUntil(lambda: len(told) == 2, timeout=30_000)
    assert told[0].endswith("-bugreport.zip")
    title, text, error = told[1]
    assert (title, error) == ("Bug report saved", False) and str(out) in text
    names = zipfile.ZipFile(out).namelist()
    assert any(n.endswith("/README.txt") for n in names) and any(n.endswith("/job.log") for n in names)
    # The same job, selected in Artifacts, is explained there too.
    window.artifacts.rescan()
    qtbot.waitUntil(lambda: window.artifacts.list.topLevelItemCount() > 0, timeout=10_000)
    window.artifacts.list.topLevelItem(0).setSelected(True)
    qtbot.waitUntil(lambda: (window.artifacts.explanation.data or {}).get("status") == "FAIL", timeout=10_000)
