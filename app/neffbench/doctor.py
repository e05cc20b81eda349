"""``neffbench doctor``'s report: the toolchain's facts (neffbench.toolchain) and what the workbench will do about
them, as the JSON document and the sentences the CLI prints and the window's status bar shows."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from neffbench.backends import registry
from neffbench.remote.display import situation
from neffbench.runs import runtimes
from neffbench.toolchain.choose import choose_backend, choose_stack, use_cpu_backend
from neffbench.toolchain.devices import NO_DEVICE
from neffbench.toolchain.facts import Facts
from neffbench.toolchain.flavour import FLAVOUR_LABELS


def report(facts: Facts) -> dict[str, Any]:
    """The facts and every decision taken from them, as ``neffbench doctor --json`` prints them."""
    out = asdict(facts)
    out["neuron_toolchain"] = facts.neuron_toolchain
    out["backend"], out["backend_reason"] = choose_backend("auto", facts)
    out["cpu_backend"], out["cpu_backend_reason"] = use_cpu_backend("auto", facts)
    out["run_runtime"], out["run_runtime_reason"] = run_runtime(facts)
    out["stack"] = choose_stack(facts).to_dict()
    out["display_situation"] = situation().to_dict()
    out["advice"] = advice(facts)
    return out


def advice(facts: Facts) -> list[str]:
    """What the workbench will do about each finding, as sentences."""
    out = []
    name, why = choose_backend("auto", facts)
    backend = registry.get(name)
    out.append(f"Compiles use the {name} backend, {backend.label}: {why}.")
    out.extend(f"Warning: {w}" for w in choose_stack(facts).warnings)
    if facts.torch_neuronx_flavour:
        out.append(f"The installed torch_neuronx is {FLAVOUR_LABELS[facts.torch_neuronx_flavour]}.")
    out.extend(backend.advice(facts))
    runtime, why_run = run_runtime(facts)
    out.append(f"`neffbench run` uses the {runtime} runtime: {why_run}.")
    if not facts.display:
        out.append(
            "No display: the window cannot open here; `neffbench remote` shows it over VNC through an SSH tunnel, "
            "and `neffbench preview` renders the plots to PNG."
        )
    out.extend(situation().fixes)
    if not facts.pyside6.found or not facts.pyqtgraph.found:
        out.append("The window needs PySide6-Essentials and pyqtgraph: run `make run` to install them.")
    return out


def run_runtime(facts: Facts) -> tuple[str, str]:
    """What ``neffbench run --runtime auto`` will use for a job compiled here (the runtimes' own choice), and why."""
    choice = runtimes.choose(runtimes.AUTO, runtimes.FactsHost(facts), None)
    runtime = choice.runtime
    if runtime.on_device:
        return runtime.name, f"{choice.why} and a Neuron device is present"
    if not facts.devices:
        return runtime.name, f"{NO_DEVICE}: runs time {runtime.what}, labelled {runtime.label}"
    return runtime.name, choice.why
