"""The Run tab has no dead ends: a chooser for the target, runtimes that cannot run here greyed out with why,
a button for the buckets not run yet, a progress count of a long run, and Esc that stops it."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from neffbench.runs.runtimes import offered
from neffbench.toolchain.facts import Component, Facts
from tests import test_gui_run as gui_run
from tests.test_gui_run import LOAD_TIMEOUT_MS, RUN_TIMEOUT_MS, run_and_wait, set_target

# The Run view's fixtures, shared with its other tests.
rig, jobs = gui_run.rig, gui_run.jobs

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def _facts(*, nrtpy: bool = False, neuronx: bool = False, devices: tuple[str, ...] = ()) -> Facts:
    c = Component
    return Facts(
        python=c("python", True, "3.11"),
        torch=c("torch", True, "2.13.0"),
        pyside6=c("PySide6", True, "6.8"),
        pyqtgraph=c("pyqtgraph", True, "0.13"),
        torch_neuronx=c(
            "torch_neuronx", neuronx, "2.9.0.2.15" if neuronx else None, "" if neuronx else "not installed"
        ),
        neuronx_cc=c("neuronx-cc", neuronx, "2.23.0"),
        devices=list(devices),
        runtimes=[c("nrtpy", nrtpy, "2.32.0" if nrtpy else None), c("spike", False)],
        torch_neuronx_flavour="legacy" if neuronx else None,
    )


def _subject(*, neff: bool, job: bool, backend: str = "neuron", model_pt: bool = True):
    return SimpleNamespace(
        neff="x.neff" if neff else None,
        job_dir="job" if job else None,
        backend=backend,
        model_pt="model.pt" if model_pt else None,
        no_neff_reason="a cpu-check job makes no NEFF",
    )


def test_offers_follow_what_doctor_found_and_what_the_target_has():
    assert all(ok for ok, _ in offered(None, None).values())  # doctor still looking: nothing is refused yet
    here = offered(_facts(), _subject(neff=False, job=True, backend="cpu-check"))
    assert here["nrtpy"] == (False, "nrtpy is not installed")
    assert here["torchscript"] == (False, "torch_neuronx is not installed")
    assert here["cpu"][0] and here["auto"][0]
    assert "auto picks cpu here" in here["auto"][1]
    no_neff = offered(_facts(nrtpy=True, devices=("/dev/neuron0",)), _subject(neff=False, job=True))
    assert no_neff["nrtpy"] == (False, "there is no NEFF to load (a cpu-check job makes no NEFF)")
    no_device = offered(_facts(nrtpy=True, neuronx=True), _subject(neff=True, job=True))
    assert no_device["nrtpy"] == (False, "nrtpy 2.32.0 is installed; no Neuron device under /dev/neuron*")
    assert no_device["torchscript"] == (
        False,
        "torch_neuronx 2.9.0.2.15 is installed; no Neuron device under /dev/neuron*",
    )
    device = offered(
        _facts(nrtpy=True, neuronx=True, devices=("/dev/neuron0",)), _subject(neff=True, job=False, model_pt=False)
    )
    assert device["nrtpy"][0] and device["torchscript"][0] is False  # a bare NEFF has no model.pt
    assert device["cpu"] == (False, "a NEFF without its job has no module to run on the CPU")


def test_runtimes_that_cannot_run_here_are_greyed_out_with_why(rig, jobs, qtbot):
    panel, _controller = rig
    panel.set_host(_facts(nrtpy=True, devices=("/dev/neuron0",)))
    set_target(panel, qtbot, jobs[0])  # a cpu-check job: no NEFF
    combo = panel.runtime_combo
    enabled = {combo.itemText(i): combo.model().item(i).isEnabled() for i in range(combo.count())}
    assert enabled == {"auto": True, "nrtpy": False, "spike": False, "torchscript": False, "cpu": True}
    tip = combo.itemData(combo.findText("nrtpy"), Qt.ItemDataRole.ToolTipRole)
    assert tip == "nrtpy: there is no NEFF to load (a cpu-check job makes no NEFF)"
    assert "Cannot run here:\n• nrtpy: there is no NEFF to load" in combo.toolTip()
    assert "• spike: spike is not installed" in combo.toolTip()


def test_the_run_tab_chooses_a_job_or_a_neff(rig, jobs, qtbot, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    panel, _controller = rig
    assert "Job…" in panel.target_label.text() and panel.chooser.isVisibleTo(panel)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(jobs[1]))
    with qtbot.waitSignal(panel.history_loaded, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(panel.chooser.job_button, Qt.MouseButton.LeftButton)
    assert panel.target_path == str(jobs[1]) and "Bucket" in panel.target_label.text()
    assert panel.run_button.isEnabled()
    neff = tmp_path / "not-really.neff"
    neff.write_bytes(b"nothing like a NEFF")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(neff), ""))
    with qtbot.waitSignal(panel.history_loaded, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(panel.chooser.neff_button, Qt.MouseButton.LeftButton)
    assert panel.target_path == str(neff)


def test_the_missing_buckets_run_from_their_button(rig, jobs, qtbot):
    panel, controller = rig
    small, _large = jobs
    set_target(panel, qtbot, small)
    run_and_wait(panel, controller, qtbot, iterations=10)
    button = panel.buckets.run_missing_button
    assert button.isVisibleTo(panel.buckets) and "8 tokens" in panel.buckets.not_run.text()
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].outcome == "succeeded" and blocker.args[0].record["runtime"] == "cpu"
    qtbot.waitUntil(lambda: len(panel.buckets.points) == 2 and not panel.loading, timeout=LOAD_TIMEOUT_MS)
    assert not button.isVisibleTo(panel.buckets) and not panel.queue.active
    assert "Ran the 1 missing bucket: the bucket curve is complete." in panel.status_label.text()


def _counting(event: dict) -> bool:
    return event.get("type") == "progress" and event.get("phase") == "timed" and 1 < event["done"] < event["total"]


def test_a_long_run_shows_its_count_and_esc_in_the_window_stops_it(window, jobs, qtbot):
    """Esc is the window's Cancel: on the Run tab it stops the benchmark, as the Run tab's Cancel button does."""
    from neffbench.gui.shell.tabs import RUN_TAB
    from neffbench.procs import group_alive

    window.build_panels()
    window.show()
    qtbot.waitExposed(window)
    panel, runs = window.panels.run, window.controllers.run
    set_target(panel, qtbot, jobs[0])
    window.tabs.setCurrentIndex(RUN_TAB)
    assert not window.cancel_action.isEnabled()
    panel.runtime_combo.setCurrentText("cpu")
    panel.iterations_spin.setValue(panel.iterations_spin.maximum())
    with qtbot.waitSignal(runs.event_received, check_params_cb=_counting, timeout=RUN_TIMEOUT_MS) as counted:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    total = counted.args[0]["total"]
    bar = panel.status.progress_bar
    assert bar.isVisibleTo(panel) and bar.maximum() == total and bar.format().startswith("timed iteration ")
    assert bar.format().endswith(f" of {total:,}")
    assert window.cancel_action.isEnabled() and "benchmark" in window.cancel_action.toolTip()
    pid = runs._loop.runner._proc.pid
    with qtbot.waitSignal(runs.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        window.activateWindow()
        qtbot.keyClick(window.tabs, Qt.Key.Key_Escape)
    result = blocker.args[0]
    assert result.outcome == "cancelled" and result.reason.startswith("cancelled after ")
    assert not group_alive(pid)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not bar.isVisibleTo(panel) and not window.cancel_action.isEnabled()
    assert panel.status_label.text().startswith("Cancelled after ")


def test_esc_stops_the_work_in_view():
    """A benchmark and a compile at once: on the Run tab Esc stops the benchmark, elsewhere the compile."""
    from neffbench.gui.shell import cancel
    from neffbench.gui.shell.tabs import COMPILE_TAB, RUN_TAB

    calls = []

    def window(tab: int, *, compiling: bool = True, benchmarking: bool = True):
        action = SimpleNamespace(setEnabled=lambda on: None, setToolTip=lambda t: None, setStatusTip=lambda t: None)
        return SimpleNamespace(
            panels_ready=True,
            tabs=SimpleNamespace(currentIndex=lambda: tab),
            controllers=SimpleNamespace(
                compile=SimpleNamespace(is_running=compiling, is_cancelling=False),
                run=SimpleNamespace(is_running=benchmarking, is_cancelling=False),
            ),
            panels=SimpleNamespace(
                sweeps=SimpleNamespace(
                    controller=SimpleNamespace(is_running=False, cancelling=False), cancel=lambda: calls.append("sweep")
                ),
                run=SimpleNamespace(cancel=lambda: calls.append("run")),
            ),
            cancel=lambda: calls.append("compile"),
            cancel_action=action,
        )

    cancel.triggered(window(RUN_TAB))
    assert calls == ["run"]
    calls.clear()
    cancel.triggered(window(COMPILE_TAB))
    assert calls == ["compile", "sweep"]
    calls.clear()
    cancel.triggered(window(COMPILE_TAB, compiling=False))
    assert calls == ["run"]
