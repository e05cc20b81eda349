"""Which runtimes a target can be run with on this host, and why not: what the window offers, from doctor's facts.

The run child decides for itself when it starts (``runtimes.availability`` imports the runtimes); this reads
only what ``neffbench doctor`` found (nothing is imported), so the window can grey out, before a run, the
runtimes that could only fail here, each with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neffbench.backends import registry as backends
from neffbench.runs.runtimes import RUNTIMES
from neffbench.toolchain.choose import choose_run_runtime

if TYPE_CHECKING:
    from neffbench.runs.subject import RunSubject
    from neffbench.toolchain.facts import Facts

NO_DEVICE = "no Neuron device under /dev/neuron* on this host"


def offered(facts: Facts | None, subject: RunSubject | None) -> dict[str, tuple[bool, str]]:
    """Each runtime of ``RUNTIMES``: (can run here, why). Without facts (doctor still looking) every runtime is
    offered; without a subject only the host's side is judged."""
    if facts is None:
        return {name: (True, "") for name in RUNTIMES}
    found = {c.name: c for c in facts.runtimes}
    devices = bool(facts.devices)
    has_neff = subject is None or subject.neff is not None
    no_neff = f"there is no NEFF to load ({subject.no_neff_reason})" if subject is not None else ""
    auto, why = choose_run_runtime(facts)
    out: dict[str, tuple[bool, str]] = {"auto": (True, f"auto picks {auto} here: {why}")}
    for name in ("nrtpy", "spike"):
        component = found.get(name)
        if component is None or not component.found:
            out[name] = (False, f"{name} is not installed")
        elif not has_neff:
            out[name] = (False, no_neff)
        elif not devices:
            out[name] = (False, NO_DEVICE)
        else:
            out[name] = (
                True,
                f"{name} {component.version or ''}".rstrip() + " is installed and a Neuron device is here",
            )
    neuronx = facts.torch_neuronx
    if not neuronx.found:
        out["torchscript"] = (False, f"torch_neuronx is {neuronx.detail or 'not installed'}")
    elif subject is not None and not (backends.neff_in_model_pt(subject.backend) and subject.model_pt is not None):
        out["torchscript"] = (False, "the job has no model.pt traced by torch_neuronx")
    elif not devices:
        out["torchscript"] = (False, NO_DEVICE)
    else:
        out["torchscript"] = (True, "torch_neuronx loads model.pt onto a NeuronCore")
    if subject is not None and subject.job_dir is None:
        out["cpu"] = (False, "a NEFF without its job has no module to run on the CPU")
    else:
        out["cpu"] = (True, "the job's module on this computer's CPU (CPU figures, not NeuronCore ones)")
    return out
