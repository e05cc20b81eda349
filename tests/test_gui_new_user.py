"""The window as a new user reads it: failures say why where the eye lands, no state goes stale, every
action answers (issue: the window as a new user sees it). Each test is one class of the problem."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from tests.test_gui_compile import JOB_TIMEOUT_MS, compile_and_wait, use_fakes

pytestmark = [pytest.mark.gui]


def _compile_failure(window, qtbot, monkeypatch):
    use_fakes(monkeypatch, "compile-error")
    window.apply_preset("seed")
    run = compile_and_wait(window, qtbot)
    assert run.outcome == "failed"
    return run


@pytest.mark.slow
def test_a_failure_headline_and_the_job_view_carry_the_first_error(window, qtbot, monkeypatch):
    _compile_failure(window, qtbot, monkeypatch)
    headline = window.panels.compile.state_label.text()
    assert headline.startswith("Failed: [NLA001] Unhandled exception with message: tensor size must be more than 0")
    assert "neuronx-cc failed with 1" in headline  # the exit still said, after the cause
    # Nothing of the compile is left "running": the pass it died in says it failed.
    states = dict(window.panels.compile.stages.states())
    assert "running" not in states.values() and states["WalrusDriver"] == "failed"
    # The Artifacts job view shows the error, the lines around it and the compiler's exit.
    artifacts = window.panels.artifacts
    artifacts.rescan()
    qtbot.waitUntil(lambda: artifacts.list.topLevelItemCount() == 1, timeout=10_000)
    artifacts.list.topLevelItem(0).setSelected(True)
    tree = artifacts.job_detail
    rows = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())}
    assert rows["first error"].text(1).startswith("[NLA001] Unhandled exception")
    children = [rows["first error"].child(i).text(1) for i in range(rows["first error"].childCount())]
    assert any("Running WalrusDriver" in c for c in children)  # the lines before it
    assert "Unhandled exception inside the compiler" in children[0]  # the code's meaning
    assert rows["compiler exit"].text(1) == "1: the compiler reported an error"


def test_tracebacks_through_library_code_are_folded_in_the_view(qtbot):
    from neffbench.gui.compile.log_view import LogView

    view = LogView()
    qtbot.addWidget(view)
    view.append_lines(
        [
            "2026-01-01T00:00:00Z INFO 1 [root]: Running Frontend",
            "Traceback (most recent call last):",
            '  File "/home/u/venv/lib/python3.11/site-packages/neffbench/jobs/backends.py", line 169, in neuron_trace',
            "    return backend.torch_neuronx.trace(module, inputs, **kwargs)",
            '  File "/home/u/models/mymodel.py", line 12, in forward',
            "    return self.proj(x)",
            '  File "/home/u/venv/lib/python3.11/site-packages/torch_neuronx/xla_impl/trace.py", line 90, in trace',
            '    raise RuntimeError(f"neuronx-cc failed with {code}")',
            "RuntimeError: neuronx-cc failed with 1",
        ]
    )
    qtbot.waitUntil(lambda: view.pending == 0, timeout=30_000)
    text = view.text.toPlainText()
    assert "site-packages" not in text and "Traceback" not in text
    assert "4 lines through neffbench and library code folded (job.log has them all)" in text
    assert "mymodel.py" in text and "self.proj(x)" in text  # the user's own frames stay
    assert text.rstrip().endswith("RuntimeError: neuronx-cc failed with 1")


def test_long_lines_wrap_on_request_and_codes_read_whole(qtbot):
    from PySide6.QtWidgets import QPlainTextEdit

    from neffbench.gui.compile.log_view import LogView

    view = LogView()
    qtbot.addWidget(view)
    assert view.text.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    view.wrap_check.setChecked(True)
    assert view.text.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    message = "[NCC_EOOM001] " + "the activations need more memory than the core has " * 4
    view.add_error_code("NCC_EOOM001", message)
    assert view.codes_list.minimumWidth() >= 220
    tip = view.codes_list.item(0).toolTip()
    assert message in tip and "docs: https://awsdocs-neuron" in tip


@pytest.mark.slow
def test_a_cancel_says_cancelling_then_which_bucket_and_the_rest_not_started(window, qtbot, monkeypatch):
    use_fakes(monkeypatch, "slow")
    window.apply_preset("seed")
    spec = window.form.spec()
    # At the default verbosity the compiler prints progress dots on a line it does not end.
    window.form.set_spec(
        dataclasses.replace(
            spec,
            inputs=dataclasses.replace(spec.inputs, num_tokens=(1, 8)),
            compiler=dataclasses.replace(spec.compiler, extra_args=("--verbose", "warning")),
        )
    )
    window.compile()
    panel = window.panels.compile
    qtbot.waitUntil(lambda: panel.stages.job is not None, timeout=JOB_TIMEOUT_MS)
    # A running stage shows its own time, and the panel shows signs of life while the compiler is quiet.
    qtbot.waitUntil(lambda: any(state == "running" for _, state in panel.stages.states()), timeout=JOB_TIMEOUT_MS)
    qtbot.waitUntil(
        lambda: panel.stages.job.child(0) is not None and panel.stages.job.child(0).text(2) != "", timeout=10_000
    )
    qtbot.waitUntil(lambda: "compiler progress" in panel.life_label.text(), timeout=JOB_TIMEOUT_MS)
    assert panel.life_label.text().startswith("Last output")
    with qtbot.waitSignal(window.controllers.compile.finished, timeout=60_000):
        qtbot.keyClick(window, Qt.Key.Key_Escape)
        assert panel.state_label.text().startswith("Cancelling…")
    assert panel.state_label.text() == "Cancelled bucket 1 token (1 of 2): 1 not started."
    assert "running" not in dict(panel.stages.states()).values()
    assert panel.life_label.text() == ""


@pytest.mark.slow
def test_a_deleted_job_leaves_every_view(window, qtbot, monkeypatch):
    _compile_failure(window, qtbot, monkeypatch)
    panel, artifacts = window.panels.compile, window.panels.artifacts
    assert panel.results.topLevelItemCount() == 1
    artifacts.rescan()
    qtbot.waitUntil(lambda: artifacts.list.topLevelItemCount() == 1, timeout=10_000)
    artifacts.list.topLevelItem(0).setSelected(True)
    artifacts.confirm = lambda text: True
    with qtbot.waitSignal(artifacts.deleted, timeout=10_000):
        artifacts.buttons["delete"].click()
    assert panel.results.topLevelItemCount() == 0
    assert "Deleted" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: artifacts.list.topLevelItemCount() == 0, timeout=10_000)


@pytest.mark.slow
def test_every_artifact_action_answers_and_no_launcher_offers_the_path(window, qtbot, monkeypatch):
    from PySide6.QtGui import QDesktopServices

    _compile_failure(window, qtbot, monkeypatch)
    artifacts = window.panels.artifacts
    artifacts.rescan()
    qtbot.waitUntil(lambda: artifacts.list.topLevelItemCount() == 1, timeout=10_000)
    artifacts.list.topLevelItem(0).setSelected(True)
    artifacts.buttons["copy_path"].click()
    assert window.statusBar().currentMessage().startswith("Copied the path ")
    artifacts.buttons["copy_reproduce"].click()
    assert window.statusBar().currentMessage().startswith("Copied reproduce.py of ")
    offered = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: False))
    artifacts.no_launcher = lambda parent, path: offered.append(path)
    artifacts.buttons["open"].click()
    assert offered and offered[0].endswith(artifacts.selected()[0].job_dir.name)
    assert "No application to open" in window.statusBar().currentMessage()


def test_an_invalid_form_never_shows_a_preview_as_computed(window, qtbot):
    window.build_panels()
    window.preview_controller.load_torch()
    qtbot.waitUntil(lambda: window.preview_panel.preview is not None, timeout=60_000)
    status = window.preview_panel.status_label
    # Text that is no number yet: an error of another kind than a range check.
    editor = window.form.editor("inputs.num_tokens")
    with qtbot.waitSignal(window.preview_controller.failed, timeout=10_000):
        editor.widget.setText("8,x")
        editor.edited.emit()
    assert "computed in" not in status.text() and "No preview" in status.text()
    # A computation that was already running when the form went invalid is dropped, not shown.
    controller = window.preview_controller
    controller.request(window.form.spec())
    controller.reject(window.form.errors())
    qtbot.waitUntil(lambda: controller._worker is None, timeout=30_000)
    assert "computed in" not in status.text()


def test_the_window_fits_a_1280_pixel_laptop_screen(window):
    # No label's sentence or button row may push the window wider than the screen (all panels built).
    window.build_panels()
    assert window.minimumSizeHint().width() <= 1280
    assert window.preview_stack.minimumSizeHint().width() < 600
