"""The runtimes are classes in one table: a runtime defined here is offered, chosen and run by the window's, doctor's
and the run child's own code once it is in the table; the three ask the same rule, and the device files are found
one way."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from neffbench import doctor
from neffbench.procs import Emitter, parse_event
from neffbench.runs import arrays, runtimes
from neffbench.runs.neff_run import NeffRun
from neffbench.runs.runtimes import Runtime, Session, Target, Timing
from neffbench.runs.subject import resolve
from neffbench.toolchain.facts import Component, Facts
from neffbench.workers.run import Run

APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"


class _EchoSession(Session):
    def __init__(self, outputs: dict[str, Any]):
        self.outputs = outputs

    def call(self) -> dict[str, Any]:
        return dict(self.outputs)

    def bench(self, warmup, iterations, mode, stop, progress=None) -> Timing:
        return Timing(0.5, [0.25] * iterations, mode)


class Echo(Runtime):
    """A runtime the workbench never had: it gives back the job's reference, on a device of its own."""

    name = "echo"
    label = "Echo (a test's device)"
    what = "the job's reference, given back"
    on_device = True

    @classmethod
    def lacks(cls, target: Target | None, host) -> str | None:
        return None if target is None or target.job else "echo gives back a job's reference, and there is no job"

    @classmethod
    def load(cls, run, neff_info, feeds) -> Session:
        return _EchoSession(arrays.load(run.req["reference"]).arrays)


@pytest.fixture
def echo(monkeypatch) -> type[Runtime]:
    """Echo, one line in the table."""
    monkeypatch.setitem(runtimes.REGISTRY, Echo.name, Echo)
    return Echo


def _facts(*, devices: tuple[str, ...] = (), nrtpy: bool = False, flavour: str | None = None) -> Facts:
    c = Component
    return Facts(
        python=c("python", True, "3.11"),
        torch=c("torch", True, "2.13.0"),
        pyside6=c("PySide6", True, "6.8"),
        pyqtgraph=c("pyqtgraph", True, "0.13"),
        torch_neuronx=c("torch_neuronx", flavour is not None, "2.13.3.0" if flavour else None, "not installed"),
        neuronx_cc=c("neuronx-cc", False, detail="not on PATH"),
        devices=list(devices),
        runtimes=[c("nrtpy", nrtpy, "2.32.0" if nrtpy else None, "not installed"), c("spike", False)],
        torch_neuronx_flavour=flavour,
    )


def _run_here(request: dict[str, Any], events: Path) -> list[dict[str, Any]]:
    """The run child's stages, in this process (the table as this test set it), its events read back."""
    fd = os.open(events, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        Run(request, Emitter(fd)).run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        os.close(fd)
    return [e for e in map(parse_event, events.read_text(encoding="utf-8").splitlines()) if e is not None]


def test_a_new_runtime_is_offered_chosen_and_run_once_it_is_in_the_table(echo, seed_cpu_check_job, tmp_path):
    subject = resolve(seed_cpu_check_job)
    # The window: offered where a device is (it is a device runtime), greyed out with why where none is.
    assert runtimes.offered(_facts(devices=("/dev/neuron0",)), subject)["echo"] == (True, echo.what)
    assert runtimes.offered(_facts(), subject)["echo"] == (
        False,
        "the job's reference, given back; no Neuron device under /dev/neuron*",
    )
    # auto and doctor: on a device that no other runtime can use, the new one is the choice.
    offers = runtimes.offered(_facts(devices=("/dev/neuron0",)), subject)
    assert offers["auto"] == (True, "auto picks echo here: the job's reference, given back")
    assert doctor.run_runtime(_facts(devices=("/dev/neuron0",))) == (
        "echo",
        "the job's reference, given back and a Neuron device is present",
    )
    bare = Target(neff=True, job=False, neuron_model_pt=False)
    with pytest.raises(runtimes.RuntimeUnavailable, match="there is no job"):
        runtimes.choose("echo", runtimes.FactsHost(_facts()), bare)
    # The run child: asked for by name it runs (no device here: it tries, as a device runtime does).
    request = NeffRun(subject, runtime="echo", iterations=3, warmup=1)._request(tmp_path / "run")
    events = _run_here(request, tmp_path / "events")
    chosen = next(e for e in events if e["type"] == "runtime")
    assert (chosen["runtime"], chosen["label"], chosen["on_device"]) == ("echo", echo.label, True)
    assert chosen["reason"] == "echo requested (the job's reference, given back; no Neuron device under /dev/neuron*)"
    assert list(chosen["available"]) == ["nrtpy", "spike", "torchscript", "cpu", "echo"]
    assert next(e for e in events if e["type"] == "numerics")["match"] is True
    assert next(e for e in events if e["type"] == "timing")["durations_ms"] == [0.25, 0.25, 0.25]


def test_the_window_auto_and_doctor_pick_by_one_rule():
    """Where a device and nrtpy are but the job made no NEFF, auto runs it on the CPU: the window says so (it once
    said auto would pick nrtpy, which it greyed out in the same list)."""
    from types import SimpleNamespace

    cpu_check = SimpleNamespace(
        neff=None,
        job_dir="job",
        backend="cpu-check",
        model_pt="model.pt",
        no_neff_reason="a cpu-check job makes no NEFF",
    )
    facts = _facts(devices=("/dev/neuron0",), nrtpy=True)
    offers = runtimes.offered(facts, cpu_check)
    assert offers["nrtpy"] == (False, "there is no NEFF to load (a cpu-check job makes no NEFF)")
    assert offers["auto"][1].startswith("auto picks cpu here: no device runtime can run here (nrtpy: there is no NEFF")
    host = runtimes.FactsHost(facts)
    assert runtimes.choose("auto", host, Target.of_subject(cpu_check)).runtime.name == "cpu"
    assert doctor.run_runtime(facts) == ("nrtpy", "nrtpy 2.32.0 is installed and a Neuron device is present")
    # TorchNeuron keeps no TorchScript holding the NEFF: neither doctor nor the window offer torchscript for it.
    native = _facts(devices=("/dev/neuron0",), flavour="native")
    assert runtimes.offered(native, None)["torchscript"] == (False, "TorchNeuron jobs have no model.pt")
    name, why = doctor.run_runtime(native)
    assert name == "cpu" and "torchscript: TorchNeuron jobs have no model.pt" in why


def test_the_run_record_keeps_every_runtime_package_version(echo, monkeypatch):
    monkeypatch.setattr(Echo, "packages", (("json", "json"),))
    assert list(runtimes.versions()) == ["python", "torch", "nrtpy", "spike", "torch_neuronx", "json", "neffbench"]


def test_the_device_files_are_found_one_way():
    """One pattern for Neuron device files (toolchain/devices.py); the run child, doctor, the backends and the
    reproduction script all take it from there."""
    pattern = re.compile(r"/dev/neuron[^ \"'\n]*[*\]]")
    globs = sorted(
        str(p.relative_to(APP))
        for p in APP.rglob("*.py")
        for line in p.read_text(encoding="utf-8").splitlines()
        if "glob" in line.lower() and pattern.search(line)
    )
    assert globs == ["toolchain/devices.py"]


def test_a_runtime_that_feeds_the_neff_by_name_takes_no_steps(monkeypatch):
    """--steps asks the runtime's class, not its name: the refusal names the runtimes that can take steps."""
    from types import SimpleNamespace

    from neffbench.workers import run_steps

    class ByName(Echo):
        name = "byname"
        feeds_neff_by_name = True

    monkeypatch.setitem(runtimes.REGISTRY, ByName.name, ByName)
    run = SimpleNamespace(req={"steps": 2})
    refusal = "byname feeds the NEFF by the names it was compiled with.* use --runtime torchscript or cpu$"
    with pytest.raises(run_steps.RunFailure, match=refusal):
        run_steps.carried(run, None, ByName, arrays.Arrays(), {})
