"""Nothing stale in the window: status messages go after a while and never hide the toolchain summary."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui]
APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"


def test_a_status_message_times_out_and_the_toolchain_summary_stays_in_view(window, qtbot, monkeypatch):
    from neffbench.gui.shell import sweeps

    monkeypatch.setattr(sweeps, "MESSAGE_MS", 300)
    window.build_panels()
    window.doctor_status.toolchain.setText("● Neuron toolchain: not found (torch-neuronx, neuronx-cc missing)")
    bar = window.statusBar()
    window.sweeps.panel.message.emit("Diffed point 0 with point 3.")
    assert bar.currentMessage() == "Diffed point 0 with point 3."
    assert window.doctor_status.isVisible()  # a permanent widget: beside the message, never under it
    qtbot.waitUntil(lambda: bar.currentMessage() == "", timeout=5_000)
    assert window.doctor_status.isVisible()


def test_every_status_message_of_the_window_has_a_timeout():
    """A message without one stays until the next: "Diffed…" read hours later as what just happened."""
    untimed = []
    for path in APP.rglob("*.py"):
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        calls = {id(n.func): n for n in nodes if isinstance(n, ast.Call)}
        for node in nodes:
            if not (isinstance(node, ast.Attribute) and node.attr == "showMessage"):
                continue
            call = calls.get(id(node))
            if call is None:
                untimed.append(f"{path.relative_to(APP)}:{node.lineno} (connected as a slot: no timeout)")
            elif len(call.args) + len(call.keywords) < 2:
                untimed.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert not untimed, untimed
