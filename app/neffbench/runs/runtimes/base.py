"""What every runtime is: the facts the run child, the window and doctor ask of it, and the one rule they share.

One class per runtime (nrtpy.py, spike.py, torchscript.py, cpu.py), listed in registry.py. The class attributes
say what it is (name, label, modes, whether it runs on a device, the packages it needs from the host, how it
treats a NEFF's inputs and a module's state); ``judge`` says whether it can run a target on a host, one rule for
every asker, the host told either by importing (the run child) or by doctor's facts (the window, doctor);
``load`` (in the run child only) makes the session that calls and times the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from neffbench.toolchain.devices import NO_DEVICE

if TYPE_CHECKING:
    from neffbench.runs.arrays import Arrays
    from neffbench.runs.runtimes.sessions import Session


class RuntimeUnavailable(RuntimeError):
    """The runtime asked for cannot run here; one sentence saying why."""


class RunFailure(Exception):
    """A failed run with its one-sentence reason."""


class Package(NamedTuple):
    """What a host says of a package a runtime imports: whether it is there, and a few words saying so."""

    found: bool
    said: str  # "nrtpy 2.32 imports", "nrtpy is not installed"


class Host(Protocol):
    """What a runtime needs to know of the host: its Neuron devices, its packages, its torch_neuronx flavour."""

    @property
    def devices(self) -> list[str]: ...

    @property
    def flavour(self) -> str | None: ...

    def package(self, name: str) -> Package: ...


@dataclass(frozen=True)
class Target:
    """What a run's target offers a runtime: a NEFF, a job (whose module can be built again), a model.pt that
    holds the NEFF. No target (None where one is asked for) is any job this host would compile."""

    neff: bool
    job: bool
    neuron_model_pt: bool
    no_neff: str = "a cpu-check job makes no NEFF"  # why there is no NEFF, when there is none

    @classmethod
    def of_request(cls, req: dict[str, Any]) -> Target:
        """The target of a run request (what the run child reads)."""
        from neffbench.backends import registry as backends

        return cls(
            bool(req.get("neff")),
            bool(req.get("job_dir")),
            backends.neff_in_model_pt(req.get("backend")) and bool(req.get("model_pt")),
            req.get("no_neff_reason") or cls.no_neff,
        )

    @classmethod
    def of_subject(cls, subject: Any) -> Target:
        """The target of a ``runs.subject.RunSubject`` (what the window holds)."""
        from neffbench.backends import registry as backends

        return cls(
            subject.neff is not None,
            subject.job_dir is not None,
            backends.neff_in_model_pt(subject.backend) and subject.model_pt is not None,
            subject.no_neff_reason or cls.no_neff,
        )


class Verdict(NamedTuple):
    """Whether a runtime can run a target here: ``can`` when asked for by name (without a device, a device
    runtime still tries and says so with its own error), ``ready`` when it can run it now (what ``auto``
    picks and the window offers), and why."""

    can: bool
    ready: bool
    why: str


class RunChild(Protocol):
    """The run child as a runtime's ``load`` sees it: its request, its output, the job's module built again."""

    req: dict[str, Any]
    out: Any  # the protocol emitter: line(), event()

    def rebuilt(self) -> Any: ...

    def output_names(self) -> list[str]: ...


class Runtime:
    """A runtime. Subclasses set the class attributes and override ``lacks`` and ``load``."""

    name: ClassVar[str]  # as on the CLI and in run records
    label: ClassVar[str]  # where a user sees it: "NeuronCore (nrtpy)", "CPU"
    what: ClassVar[str] = ""  # what it runs, for a sentence: "the job's module on the CPU"
    modes: ClassVar[tuple[str, ...]] = ("host",)  # how it times, the first the default
    on_device: ClassVar[bool] = False  # runs on a NeuronCore: its figures are device figures
    # What it imports from the host: (module, distribution); their versions go into every run record.
    packages: ClassVar[tuple[tuple[str, str], ...]] = ()
    # It feeds the NEFF by the names it was compiled with: the feeds are checked against the NEFF's inputs first,
    # and which of them hold a module's state is not documented (no --steps).
    feeds_neff_by_name: ClassVar[bool] = False
    # What it loads keeps the module's state itself, on the device: it takes the inputs alone.
    keeps_state_on_device: ClassVar[bool] = False

    @classmethod
    def lacks(cls, target: Target | None, host: Host) -> str | None:
        """What the target (or, without one, what any job compiled on this host) lacks for this runtime."""
        return None

    @classmethod
    def judge(cls, host: Host, target: Target | None) -> Verdict:
        """The one rule: its packages import (or are installed), the target has what it loads, and a device
        runtime is ready only with a device."""
        why = cls.what
        for module, _ in cls.packages:
            found, why = host.package(module)
            if not found:
                return Verdict(False, False, why)
        lack = cls.lacks(target, host)
        if lack is not None:
            return Verdict(False, False, lack)
        if cls.on_device and not host.devices:
            return Verdict(True, False, f"{why}; {NO_DEVICE}")
        return Verdict(True, True, why)

    @classmethod
    def load(cls, run: RunChild, neff_info: Any, feeds: Arrays) -> Session:
        """The target loaded (in the run child): a session whose ``call`` and ``bench`` the run makes."""
        raise NotImplementedError
