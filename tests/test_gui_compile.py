"""Compiling from the window with the fake Neuron toolchain: log, stages, results, cancel, failures, artifacts, diff."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from neffbench.jobs.records import process_alive as pid_alive
from neffbench.presets import load_preset
from tests.fakes import fake_env

pytestmark = [pytest.mark.gui, pytest.mark.slow]
JOB_TIMEOUT_MS = 120_000


def use_fakes(monkeypatch, scenario: str, **extra: str) -> None:
    for key, value in fake_env(scenario, **extra).items():
        monkeypatch.setenv(key, value)


def compile_and_wait(window, qtbot):
    assert window.compile_action.isEnabled(), window.compile_button.toolTip()
    with qtbot.waitSignal(window.controllers.compile.finished, timeout=JOB_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    return blocker.args[0]


def assert_idle(window):
    assert not window.controllers.compile.is_running
    assert window.compile_action.isEnabled()
    assert not window.cancel_action.isEnabled()


def test_two_buckets_compile_one_after_another_and_show_their_neffs_and_diff(window, qtbot, monkeypatch):
    use_fakes(monkeypatch, "success")
    spec = load_preset("seed")
    window.form.set_spec(dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, num_tokens=(1, 4))))
    lines_seen = []
    window.controllers.compile.lines_received.connect(lines_seen.append)
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "succeeded", [r.reason for r in run.results]
    assert [r.record["num_tokens"] for r in run.results] == [1, 4]
    assert_idle(window)
    panel = window.panels.compile
    assert lines_seen and panel.log_view.received == sum(len(batch) for batch in lines_seen)
    qtbot.waitUntil(lambda: panel.log_view.pending == 0)
    assert "Compiler status PASS" in panel.log_view.text.toPlainText()
    assert panel.results.topLevelItemCount() == 2
    assert ".neff" in panel.results.topLevelItem(0).text(2)
    # No Neuron device here: the NEFF cannot run, and the results say so rather than invent an error.
    assert "not checked" in panel.results.topLevelItem(0).text(3) and "cpu_backend" in panel.results.topLevelItem(
        0
    ).text(3)
    assert panel.state_label.text().startswith("Succeeded")
    # Stages and compiler passes were shown as they happened.
    job = panel.stages.topLevelItem(0)
    stages = [job.child(i).text(0) for i in range(job.childCount())]
    assert "tracing" in stages and "compiling" in stages
    compiling = job.child(stages.index("compiling"))
    assert compiling.childCount() >= 1 and compiling.child(0).text(1) == "finished"

    # Artifacts: both NEFFs, newest first, with the inspector's detail and the job record.
    artifacts = window.panels.artifacts
    with qtbot.waitSignal(artifacts.scanned, timeout=30_000):
        artifacts.rescan()
    neff_rows = [a for a in artifacts.artifacts if a.neff is not None]
    assert len(neff_rows) == 2 and all(a.neff.info is not None for a in neff_rows)
    artifacts.select(neff_rows[0].key)
    detail = artifacts.detail
    fields = [detail.topLevelItem(i).text(0) for i in range(detail.topLevelItemCount())]
    assert {"Header", "Inputs", "Outputs", "Members", "Compiler version"} <= set(fields)
    job_fields = [artifacts.job_detail.topLevelItem(i).text(0) for i in range(artifacts.job_detail.topLevelItemCount())]
    assert {"outcome", "compiler command", "timings"} <= set(job_fields)
    assert "[model]" in artifacts.spec_text.toPlainText()
    # Two selected: their diff.
    for i in range(2):
        artifacts.list.topLevelItem(i).setSelected(True)
    assert artifacts.tabs.currentIndex() == 2
    diffs = [
        (artifacts.diff.topLevelItem(i).text(0), artifacts.diff.topLevelItem(i).text(1))
        for i in range(artifacts.diff.topLevelItemCount())
    ]
    assert ("spec", "inputs.num_tokens") in diffs
    # Double-clicking a result shows its job in Artifacts.
    item = panel.results.topLevelItem(1)
    panel.results.itemActivated.emit(item, 0)
    assert window.tabs.currentIndex() == 2
    assert [a.job_dir.name for a in artifacts.selected()] == [item.text(4)]


def test_cancel_stops_a_slow_compile_for_real(window, qtbot, monkeypatch, tmp_path):
    pidfile = tmp_path / "pids"
    use_fakes(monkeypatch, "slow", FAKE_NEURONX_CC_PIDFILE=str(pidfile))
    window.apply_preset("seed")
    window.compile()
    assert window.controllers.compile.is_running and window.cancel_action.isEnabled()
    assert not window.compile_action.isEnabled() and "running" in window.compile_button.toolTip()
    qtbot.waitUntil(lambda: pidfile.exists() and "grandchild" in pidfile.read_text(), timeout=JOB_TIMEOUT_MS)
    pids = [int(line.split()[1]) for line in pidfile.read_text().splitlines()]
    qtbot.waitUntil(lambda: window.panels.compile.log_view.received > 0, timeout=30_000)
    with qtbot.waitSignal(window.controllers.compile.finished, timeout=60_000) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert blocker.args[0].outcome == "cancelled"
    assert_idle(window)
    assert window.panels.compile.state_label.text().startswith("Cancelled")
    qtbot.waitUntil(lambda: not any(pid_alive(p) for p in pids), timeout=30_000)


def test_a_compiler_error_lists_its_code_and_returns_to_idle(window, qtbot, monkeypatch):
    use_fakes(monkeypatch, "compile-error")
    window.apply_preset("seed")
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "failed"
    assert_idle(window)
    log = window.panels.compile.log_view
    codes = [log.codes_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(log.codes_list.count())]
    assert "NLA001" in codes
    assert window.panels.compile.state_label.text().startswith("Failed")
    assert window.panels.compile.results.topLevelItem(0).text(1) == "failed"


def test_a_crashed_worker_is_a_failure_and_the_ui_returns_to_idle(window, qtbot, monkeypatch):
    use_fakes(monkeypatch, "worker-segfault")
    window.apply_preset("seed")
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "failed" and "SIGSEGV" in (run.results[0].reason or "")
    assert_idle(window)


def test_without_the_toolchain_the_window_says_no_neff_was_made(window, qtbot, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no neuronx-cc, and no fake torch_neuronx on PYTHONPATH
    window.apply_preset("seed")
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "succeeded"
    assert run.results[0].record["backend"] == "cpu-check" and not run.results[0].neffs
    panel = window.panels.compile
    assert panel.results.topLevelItem(0).text(2) == "no NEFF (cpu-check)"
    assert "max abs error" in panel.results.topLevelItem(0).text(3)
    assert "No NEFF (cpu-check): nothing was compiled for Neuron." in panel.state_label.text()
    assert "no NEFF will be made" in panel.backend_label.text()
    with qtbot.waitSignal(window.panels.artifacts.scanned, timeout=30_000):
        window.panels.artifacts.rescan()
    rows = window.panels.artifacts.artifacts
    assert len(rows) == 1 and rows[0].neff is None and rows[0].outcome == "succeeded"
