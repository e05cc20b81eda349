"""In the window, a relative entry and import path mean what they mean to Resolve: the folder the window was started
in. Compile reads the same files, and the job records them absolute."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import load

pytestmark = [pytest.mark.gui, pytest.mark.slow]

BOOM = """
import torch
from helpers import scale


class Boom(torch.nn.Module):
    def forward(self, x):
        return scale(x)
"""


@pytest.fixture(autouse=True)
def _warm_probe():
    yield
    from neffbench.probe.client import close_shared

    close_shared()


def test_resolve_and_compile_read_a_relative_entry_from_where_the_window_started(
    make_window, qtbot, tmp_path, monkeypatch
):
    launch = tmp_path / "launch"
    (launch / "lib").mkdir(parents=True)
    (launch / "boom.py").write_text(BOOM)
    (launch / "lib" / "helpers.py").write_text("def scale(x):\n    return x * 3\n")
    monkeypatch.chdir(launch)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no Neuron toolchain: the compile is a CPU check
    window = make_window(workdir=tmp_path / "wd")
    typed = ModuleCompileSpec(
        name="boom", module=ModuleSection(entry="boom.py:Boom", path=("lib",)), inputs={"x": "f32[2,4]"}
    )
    window.form.set_spec(typed)
    form = window.form.current()
    with qtbot.waitSignal(form.resolved, timeout=60_000) as blocker:
        qtbot.mouseClick(form.findChild(QPushButton, "resolve-button"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["ok"], blocker.args[0]
    assert "changed since this Resolve" not in form.summary.text()
    assert window.form.spec().module == typed.module  # the form shows what was typed

    qtbot.waitUntil(window.compile_action.isEnabled, timeout=30_000)
    with qtbot.waitSignal(window.controllers.compile.finished, timeout=120_000) as blocker:
        window.compile()
    run = blocker.args[0]
    assert run.outcome == "succeeded", [r.reason for r in run.results] or run.error
    job = load(run.results[0].job_dir / "spec.toml")
    assert job.module.entry == f"{launch.resolve() / 'boom.py'}:Boom"
    assert job.module.path == (str(launch.resolve() / "lib"),)
    assert dataclasses.replace(job, workdir="") == dataclasses.replace(window.current_spec(), workdir="")
