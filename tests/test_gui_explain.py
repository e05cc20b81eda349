"""The window's explanation of a compiler log: after a failed compile, for a job in Artifacts, for a dropped
file; a code's help on click; Save bug report."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from neffbench.gui.widgets import theme
from tests.test_gui_compile import compile_and_wait, use_fakes

pytestmark = [pytest.mark.gui]
CORPUS = Path(__file__).parent / "data" / "compiler_logs"


def test_a_dropped_log_is_explained_and_its_code_shows_help(window, qtbot):
    window.build_panels()
    window.drops.handle(str(CORPUS / "job_log_neffbench.log"))
    view = window.panels.compile.explanation
    assert window.panels.compile.log_tabs.currentWidget() is view
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
    from PySide6.QtWidgets import QFileDialog, QMenu

    window.build_panels()
    # Found among the menu bar's children: QAction.menu()'s wrapper does not outlive the call on PySide6 6.6.
    menus = [m for m in window.menuBar().findChildren(QMenu) if window.explain_action in m.actions()]
    assert [m.title().replace("&", "") for m in menus] == ["File"]
    asked = []

    def pick(parent, title, folder, filters):
        asked.append(title)
        return str(CORPUS / "job_log_neffbench.log"), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", pick)
    window.explain_action.trigger()
    view = window.panels.compile.explanation
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert asked == ["Explain a compiler log"]
    assert view.data["first_error"]["code"] == "NCC_EOOM001"
    assert window.panels.compile.log_tabs.currentWidget() is view
    assert window.tabs.currentWidget() is window.panels.compile.parentWidget()


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
    panel = window.panels.compile
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
    window.panels.artifacts.rescan()
    qtbot.waitUntil(lambda: window.panels.artifacts.list.topLevelItemCount() > 0, timeout=10_000)
    window.panels.artifacts.list.topLevelItem(0).setSelected(True)
    qtbot.waitUntil(lambda: (window.panels.artifacts.explanation.data or {}).get("status") == "FAIL", timeout=10_000)


def _job(root: Path, name: str, log: str, **record) -> Path:
    """A job directory as a job leaves it, as far as the pane reads it: job.json and job.log."""
    job = root / name
    job.mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"schema_version": 1, "job_id": name, **record}))
    (job / "job.log").write_text(log)
    return job


CPU_CHECK_LOG = (
    "neffbench: backend cpu-check: cpu-check requested: torch.jit.trace on CPU only, no NEFF is made\n"
    "neffbench: traced in 0.01 s (no NEFF, cpu-check)\n"
)


def test_the_pane_says_it_belongs_to_an_earlier_job_once_a_compile_or_sweep_starts(window, qtbot, tmp_path):
    from neffbench.sweeps import plan

    window.build_panels()
    panel = window.panels.compile
    view = panel.explanation
    failed = _job(
        tmp_path, "a-failed", (CORPUS / "job_log_neffbench.log").read_text(), outcome="failed", backend="neuron"
    )
    view.explain_path(failed)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert "Job a-failed" in view.headline.text() and view.belongs.isHidden()
    # A sweep starts: what is shown is job A's, and the pane says so (no red failure beside a green sweep).
    panel.show_sweep_started(plan(window.current_spec(), ["compiler.optlevel=1,2"], backend="cpu-check"))
    assert not view.belongs.isHidden()
    assert view.belongs.text().startswith("This explains job a-failed, not one of the sweep started at ")
    # An answer still on its way when a compile starts is shown as what it is: job A's.
    view.explain_path(failed)
    assert view.belongs.isHidden() and view.data is None
    panel.show_started(window.current_spec())
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert view.belongs.text().startswith("This explains job a-failed, not one of the compile started at ")
    assert not view.belongs.isHidden()
    # The compile's own job: the pane is its, and says nothing of belonging elsewhere.
    ok = _job(tmp_path, "b-ok", CPU_CHECK_LOG, outcome="succeeded", backend="cpu-check", neff_note="no NEFF")
    view.explain_path(ok)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert "Job b-ok" in view.headline.text() and view.belongs.isHidden()
    view.clear()
    panel.show_sweep_started(plan(window.current_spec(), ["compiler.optlevel=1,2"], backend="cpu-check"))
    assert view.belongs.isHidden()  # nothing shown: nothing to disown


def test_a_cpu_check_job_is_explained_by_its_outcome_and_cause(window, qtbot, tmp_path):
    window.build_panels()
    view = window.panels.compile.explanation
    ok = _job(tmp_path, "ok", CPU_CHECK_LOG, outcome="succeeded", backend="cpu-check", duration_s=1.5)
    view.explain_path(ok / "job.log")  # the log of a job is the job
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert "Succeeded: cpu-check checked the module on the CPU" in view.headline.text()
    assert theme.GOOD in view.headline.text()
    body = view.body.toPlainText()
    assert "No outcome" not in view.headline.text() and "Compiler version" not in body
    assert "none ran (cpu-check)" in body and "ok: succeeded in 1.5 s" in body
    raised = _job(
        tmp_path,
        "raised",
        CPU_CHECK_LOG,
        outcome="failed",
        backend="cpu-check",
        stage="inputs",
        reason="calling Bad.forward raised ValueError at bad.py:4: shapes do not line up",
        error={"message": "ValueError: shapes do not line up", "line": "ValueError: shapes do not line up"},
    )
    view.explain_path(raised)
    qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
    assert "Failed: calling Bad.forward raised ValueError at bad.py:4" in view.headline.text()
    assert theme.BAD in view.headline.text()
    body = view.body.toPlainText()
    assert "First error (from job.json)" in body and "shapes do not line up" in body
    assert view.report_button.isEnabled()


@pytest.mark.slow
def test_after_a_failed_compile_a_sweep_and_a_cache_hit_the_pane_is_never_stale(window, qtbot, monkeypatch):
    from tests.test_gui_sweeps import _sweep

    use_fakes(monkeypatch, "compile-error")
    window.apply_preset("seed")
    run = compile_and_wait(window, qtbot)
    view = window.panels.compile.explanation
    first = run.results[0].job_dir.name
    qtbot.waitUntil(lambda: (view.data or {}).get("job_id") == first, timeout=10_000)
    assert "NLA001" in view.headline.text()
    monkeypatch.undo()  # no toolchain from now on: cpu-check, whose keys the window predicts (for the cache)
    _plan, result = _sweep(window, qtbot, ["compiler.optlevel=1,2"])
    assert result.state == "succeeded"
    assert window.panels.compile.state_label.text().startswith("Sweep done")
    # Beside the green "Sweep done", the red failure says whose it is.
    assert not view.belongs.isHidden()
    assert view.belongs.text().startswith(f"This explains job {first}, not one of the sweep started at ")
    # A compile, and the same again, served from the cache: that job is explained, as such.
    assert compile_and_wait(window, qtbot).outcome == "succeeded"
    hit = compile_and_wait(window, qtbot).results[0]
    assert hit.outcome == "succeeded"
    assert hit.view.cache_hit
    qtbot.waitUntil(lambda: (view.data or {}).get("job_id") == hit.job_dir.name, timeout=10_000)
    assert "served from the cache" in view.headline.text() and view.belongs.isHidden()


def test_the_pane_marks_a_root_cause_opens_the_other_errors_and_says_where_facts_come_from(window, qtbot, tmp_path):
    from neffbench.gui.explain.view import MORE_ERRORS

    window.build_panels()
    view = window.panels.compile.explanation

    def explained(path) -> str:
        view.explain_path(path)
        qtbot.waitUntil(lambda: view.data is not None, timeout=10_000)
        return view.body.toPlainText()

    # The failure just above an internal compiler error, marked as its likely root cause.
    body = explained(CORPUS / "nla001_after_import_failed.log")
    assert "Likely root cause (line 4, just above the internal compiler error)" in body
    assert "HLO import failed for custom-call" in body
    # "N more errors" opens them, and closes them again.
    body = explained(CORPUS / "multi_compile_training.log")
    errors = view.data["errors"]
    assert f"▸ {len(errors) - 1} more errors in this output" in body and MORE_ERRORS in view.body.toHtml()
    assert errors[1]["message"].split("\n")[0] not in body
    view.body.anchorClicked.emit(QUrl(MORE_ERRORS))
    opened = view.body.toPlainText()
    assert f"▾ {len(errors) - 1} more errors in this output" in opened
    assert all(f"line {e['line']}" in opened and e["message"].split("\n")[0] in opened for e in errors[1:])
    view.body.anchorClicked.emit(QUrl(MORE_ERRORS))
    assert errors[1]["message"].split("\n")[0] not in view.body.toPlainText()
    # Two targets in the command: the one used is said.
    two = tmp_path / "two.log"
    two.write_text(
        "2025-01-01T00:00:00Z INFO 7 [root]: /opt/bin/neuronx-cc compile model --framework XLA --target trn1 "
        "--output graph.neff --target inf2\nCompiler status PASS\n"
    )
    assert "neuronx-cc uses the right-most, --target inf2" in explained(two)
    # A cached job: its compiler version is the record's, and said to be.
    cached = _job(
        tmp_path, "cached", "neffbench: served from the cache\n", outcome="succeeded", backend="neuron",
        cache={"hit": True, "from": "wd/first"}, versions={"neuronx_cc": "2.21.33363.0"},
        compiler={"version_from_log": "2.21.33363.0"}, compiler_command={"actual": ["neuronx-cc", "compile", "m"]},
    )  # fmt: skip
    body = explained(cached)
    assert "Compiler version: 2.21.33363.0 (from the job's record: this output does not say)" in body
    assert "served from the cache" in view.headline.text() and "(not in this output)" not in body


def test_pass_names_stay_whole_in_a_narrow_pane(qtbot):
    from neffbench.gui.explain.view import ExplanationView

    view = ExplanationView()
    qtbot.addWidget(view)
    passes = [{"name": "WalrusDriver", "seconds": 2.5}, {"name": "coloring_allocator", "seconds": 0.6}]
    view.show_data({"headline": "Succeeded", "outcome": "passed", "passes": passes})
    view.resize(300, 500)  # a wide left column leaves the Compile tab's pane this narrow
    view.show()
    qtbot.waitExposed(view)
    document = view.body.document()
    document.setTextWidth(view.body.viewport().width())
    for name in ("WalrusDriver", "coloring_allocator"):
        found = document.find(name)
        assert not found.isNull()
        block = found.block()
        assert block.text() == name and block.layout().lineCount() == 1, f"{name} is broken over lines"
