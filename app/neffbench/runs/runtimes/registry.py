"""The runtimes by name: an explicit table, as the backends are listed (backends/registry.py), and the choice of
one for a target on a host, which the run child, the window and doctor all make here.

The table's order is the order ``auto`` tries them in: the device runtimes first (when a device is here), then
one that runs on this computer.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neffbench.runs.runtimes.base import Host, Runtime, RuntimeUnavailable, Target, Verdict
from neffbench.runs.runtimes.cpu import Cpu
from neffbench.runs.runtimes.hosts import FactsHost
from neffbench.runs.runtimes.nrtpy import Nrtpy
from neffbench.runs.runtimes.spike import Spike
from neffbench.runs.runtimes.torchscript import TorchScript

if TYPE_CHECKING:
    from neffbench.runs.subject import RunSubject
    from neffbench.toolchain.facts import Facts

AUTO = "auto"
REGISTRY: dict[str, type[Runtime]] = {cls.name: cls for cls in (Nrtpy, Spike, TorchScript, Cpu)}
# What --runtime accepts: "auto" picks one (choose).
RUNTIMES = (AUTO, *REGISTRY)


def get(name: str) -> type[Runtime]:
    """The class of runtime ``name``; RuntimeUnavailable naming the known ones for a name no class answers to."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise RuntimeUnavailable(f"unknown runtime {name!r}; known runtimes: {', '.join(REGISTRY)}") from None


def verdicts(host: Host, target: Target | None) -> dict[str, Verdict]:
    """Each runtime's verdict on running ``target`` (None: any job compiled here) on ``host``."""
    return {name: cls.judge(host, target) for name, cls in REGISTRY.items()}


@dataclass(frozen=True)
class Choice:
    """The runtime a run uses, and why; ``verdicts`` is every runtime's, as the run record keeps them."""

    runtime: type[Runtime]
    requested: str
    why: str
    verdicts: dict[str, Verdict]

    @property
    def reason(self) -> str:
        """As the run says it: ``auto: nrtpy 2.32 imports`` or ``cpu requested (the job's module on the CPU)``."""
        return f"auto: {self.why}" if self.requested == AUTO else f"{self.requested} requested ({self.why})"


def choose(requested: str, host: Host, target: Target | None) -> Choice:
    """The runtime asked for, when it can run the target here; for ``auto`` the first device runtime ready here,
    else the first that runs on this computer. RuntimeUnavailable says why none can."""
    found = verdicts(host, target)
    if requested != AUTO:
        get(requested)
        verdict = found[requested]
        if not verdict.can:
            raise RuntimeUnavailable(f"the {requested} runtime cannot run here: {verdict.why}.")
        return Choice(REGISTRY[requested], requested, verdict.why, found)
    on_device = [name for name in found if REGISTRY[name].on_device]
    for name in on_device:
        if found[name].ready:
            return Choice(REGISTRY[name], AUTO, found[name].why, found)
    reasons = "; ".join(f"{name}: {found[name].why}" for name in on_device)
    others = [name for name in found if name not in on_device]
    for name in others:
        if found[name].ready:
            cls = REGISTRY[name]
            why = f"no device runtime can run here ({reasons}), so the {cls.label} runs it"
            return Choice(cls, AUTO, why, found)
    rest = "; ".join(f"{name}: {found[name].why}" for name in others)
    raise RuntimeUnavailable(f"no runtime can run this here: {reasons}; {rest}.")


def offered(facts: Facts | None, subject: RunSubject | None) -> dict[str, tuple[bool, str]]:
    """What the window offers, from doctor's facts: each of ``RUNTIMES`` with whether it can run the subject here
    now and why. Without facts (doctor still looking) every runtime is offered; without a subject only the host's
    side is judged."""
    if facts is None:
        return {name: (True, "") for name in RUNTIMES}
    host = FactsHost(facts)
    target = Target.of_subject(subject) if subject is not None else None
    try:
        choice = choose(AUTO, host, target)
        auto = (True, f"auto picks {choice.runtime.name} here: {choice.why}")
    except RuntimeUnavailable as exc:
        auto = (False, str(exc))
    return {AUTO: auto, **{name: (v.ready, v.why) for name, v in verdicts(host, target).items()}}


def versions() -> dict[str, Any]:
    """What a run record keeps of the versions: Python, torch, every runtime's packages and the workbench."""
    from neffbench.versions import package_version

    out: dict[str, Any] = {"python": platform.python_version(), "torch": package_version("torch", "torch")}
    for cls in REGISTRY.values():
        for module, dist in cls.packages:
            out[module] = package_version(module, dist)
    out["neffbench"] = package_version("neffbench", "neffbench")
    return out
