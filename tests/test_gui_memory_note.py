"""The memory verdict in the window: the form warns past the free memory and blocks Compile past all of it until
"Compile anyway" is ticked; the sweep dialog blocks Start the same way."""

from __future__ import annotations

import dataclasses

import pytest

from neffbench.jobs import memory_verdict
from neffbench.kernels.rope.params import RopeCompileSpec

GiB = 2**30


@pytest.fixture
def small_machine(monkeypatch):
    monkeypatch.setattr(memory_verdict, "total_bytes", lambda: 4 * GiB)
    monkeypatch.setattr(memory_verdict, "available_bytes", lambda: 2 * GiB)


def _spec(tokens: int) -> RopeCompileSpec:
    spec = RopeCompileSpec()
    return dataclasses.replace(
        spec,
        model=dataclasses.replace(spec.model, head_size=128, num_heads_q=128, num_heads_k=16),
        inputs=dataclasses.replace(spec.inputs, num_tokens=(1, tokens)),
    )


def test_a_spec_beyond_the_machine_blocks_compile_until_allowed(window, qtbot, small_machine):
    qtbot.waitUntil(lambda: window.panels_ready, timeout=10_000)
    note = window.form.memory
    window.form.set_spec(_spec(8192))  # about 9.6 GiB by the kernel's estimate
    assert note.isVisible() and note.allow.isVisible()
    assert note.label.property("severity") == "block" and "at num_tokens=8192" in note.label.text()
    assert not window.compile_action.isEnabled() and window.sweep_action.isEnabled()
    assert 'tick "Compile anyway"' in window.compile_action.toolTip()
    window.compile()  # refused: nothing starts
    assert not window.controllers.compile.is_running
    note.allow.setChecked(True)
    assert window.compile_action.isEnabled()
    window.form.set_spec(_spec(2048))  # about 2.9 GiB: past the free memory only
    assert note.isVisible() and not note.allow.isVisible() and not note.allow.isChecked()
    assert note.label.property("severity") == "warn" and window.compile_action.isEnabled()
    window.form.set_spec(_spec(8))
    assert not note.isVisible() and window.compile_action.isEnabled()
    window.form.set_spec(_spec(8192))
    assert not window.compile_action.isEnabled()  # allowing once does not allow the next block


def test_the_sweep_dialog_blocks_start_until_allowed(qtbot, small_machine):
    from neffbench.gui.sweeps.dialog import SweepDialog

    dialog = SweepDialog(_spec(8192), backend="cpu-check")
    qtbot.addWidget(dialog)
    dialog.add_axis("compiler.optlevel", "1,2")
    dialog.replan()
    assert dialog.memory_note.verdict.blocks and "Start anyway" in dialog.memory_note.label.text()
    assert not dialog.start_button.isEnabled()
    dialog.memory_note.allow.setChecked(True)
    assert dialog.start_button.isEnabled()
    dialog.memory_spin.setValue(1.0)  # the user's own figure replaces the estimate
    dialog.replan()
    assert dialog.memory_note.verdict.level == "ok" and dialog.start_button.isEnabled()
