"""The window refuses, before any job, a module that cannot be built, as the command line does."""

from __future__ import annotations

import pytest

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection

pytestmark = [pytest.mark.gui, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _warm_probe():
    yield
    from neffbench.probe.client import close_shared

    close_shared()


def test_the_window_starts_no_job_for_a_module_that_cannot_be_built(qtbot, tmp_path):
    from neffbench.gui.compile.controller import CompileController

    (tmp_path / "tiny.py").write_text("from torch import nn\n\n\ndef make():\n    return nn.Linear(4, 4)\n")
    spec = ModuleCompileSpec(
        module=ModuleSection(entry=f"{tmp_path / 'tiny.py'}:make"),
        inputs={"y": "f32[2,4]"},
        workdir=str(tmp_path / "wd"),
    )
    controller = CompileController(backend="cpu-check")
    with qtbot.waitSignal(controller.finished, timeout=120_000) as blocker:
        controller.start(spec, tmp_path / "wd")
    run = blocker.args[0]
    assert run.outcome == "failed" and not run.results
    assert "input 'y' names no parameter of Linear.forward" in run.error and "nothing was started" in run.error
    assert not list((tmp_path / "wd").glob("*/job.json"))
