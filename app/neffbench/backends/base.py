"""What every backend is: a few facts a job record is read with, and the worker's steps it overrides.

One class per backend (backends/legacy.py, torchneuron.py, cpu_check.py), each answering for itself what the
rest of the workbench used to ask by comparing names. The class attributes are what a reader of a job record
needs (no torch, no toolchain); an instance is a backend resolved in the worker (backends/choose.py) and
carries what the resolution found (the torch_neuronx module, the compiler's path, the cpu_backend decision).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Protocol

from neffbench.kernels.api import Built


class JobFailure(Exception):
    """A failure with a one-line reason for the record (the traceback goes to the log)."""


class JobContext(Protocol):
    """The worker's job as a backend's steps see it: where it is, what it reports, its CPU trace."""

    job_dir: Path
    stage: str
    out: Any  # the protocol emitter: line(), event(), stage()

    def metric(self, name: str, value: Any, unit: str | None = None) -> None: ...

    def cpu_trace(self, report: Any, built: Any, *, blocking: bool) -> Any: ...

    def log_tail(
        self, folder: Path, logfile: Path, started: Callable[[], None] | None = None
    ) -> ContextManager[Any]: ...


@dataclass
class Traced:
    """What a backend's trace step made: a TorchScript holding the NEFF (model.pt), or a compiled module
    verification calls (TorchNeuron), or both None when the step made neither."""

    traced: Any = None
    compiled: Any = None

    @property
    def input_keys(self) -> dict[int, str] | None:
        """inputs.npz's key per input index as the NEFF names them; None for the trace's own order."""
        return None if self.compiled is None else self.compiled.input_keys


class Backend:
    """A compile backend. Subclasses set the class attributes and override the steps that differ."""

    name: ClassVar[str]  # as on the CLI and in job.json
    label: ClassVar[str]  # where a user sees it: CLI help, doctor, the status bar's tooltip
    short: ClassVar[str]  # the status bar's few words
    makes_neff: ClassVar[bool] = True
    runs_compiler: ClassVar[bool] = True  # cpu-check runs none: no compiler/, no compiler command
    keeps_model_pt: ClassVar[bool] = True  # a TorchScript holding the NEFF (TorchNeuron keeps none)
    # Folders of a job whose NEFFs are copies of NEFFs recorded elsewhere in it.
    neff_copies: ClassVar[tuple[str, ...]] = ()
    # job.json's neff_note when the backend makes no NEFF by design (None: a missing NEFF is a failure's sign).
    neff_note: ClassVar[str | None] = None
    compiler_note: ClassVar[str | None] = None  # job.json's compiler_command note when it runs no compiler
    trace_verb: ClassVar[str] = "traced"
    trace_note: ClassVar[str] = ""  # after "traced in 1.2 s" in the log
    # The torch_neuronx flavour it needs when asked for by name ("legacy", "native"), and whether it takes
    # torch_neuronx.trace's cpu_backend (and so the platform override) and TorchNeuron's job-local caches.
    flavour_needed: ClassVar[str | None] = None
    uses_cpu_backend: ClassVar[bool] = False
    isolates_environment: ClassVar[bool] = False
    # Whether pre-flight's advice on complex numbers depends on the compiler's version (worth its seconds).
    asks_compiler_version: ClassVar[bool] = False
    # How it compiles a module with state (a KV cache): job.json's state.how.
    keeps_state_as: ClassVar[str] = "passed in and returned: the state is lifted out of the module"

    def __init__(
        self,
        reason: str,
        *,
        cpu_backend: bool | None = None,
        cpu_backend_reason: str | None = None,
        torch_neuronx: ModuleType | None = None,
        neuronx_cc: str | None = None,
        flavour: str | None = None,
    ):
        self.reason = reason
        self.cpu_backend = cpu_backend
        self.cpu_backend_reason = cpu_backend_reason
        self.torch_neuronx = torch_neuronx
        self.neuronx_cc = neuronx_cc  # path
        self.flavour = flavour  # of the torch_neuronx imported: "native" or "legacy"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r})"

    # ---- what a job record says of it ----

    def event(self) -> dict[str, Any]:
        """The protocol's ``backend`` event: what the record keeps of the resolution."""
        return {
            "type": "backend",
            "backend": self.name,
            "reason": self.reason,
            "makes_neff": self.makes_neff,
            "cpu_backend": self.cpu_backend,
            "cpu_backend_reason": self.cpu_backend_reason,
            "flavour": self.flavour,
        }

    @classmethod
    def cache_part(cls, spec: Any) -> Any:
        """What, beyond the spec, decides this backend's NEFF: part of the cache key (jobs/cache.py)."""
        return None

    @classmethod
    def no_neff_reason(cls) -> str | None:
        """Why a job of this backend has no NEFF by design, for a run that wants one; None when it should have one."""
        return None

    @classmethod
    def wrong_flavour(cls, version: str | None, is_what: str) -> str:
        """Why torch_neuronx ``version``, which ``is_what``, cannot serve a request for this backend by name."""
        return f"the {cls.name} backend was requested but torch_neuronx {version} is {is_what}"

    @classmethod
    def spec_problems(cls, spec: Any) -> list[Any]:
        """The spec fields this backend cannot honour on this host (spec.problems.Problem), before a compile."""
        return []

    @classmethod
    def status_warning(cls, facts: Any) -> str | None:
        """The status bar's warning when compiles with this backend cannot work on this host, else None."""
        return None

    @classmethod
    def advice(cls, facts: Any) -> list[str]:
        """``neffbench doctor``'s sentences about compiling with this backend on a host with ``facts``."""
        return []

    @classmethod
    def complex_advice(
        cls, ops: str, outside: list[Any], neuronx_cc: str | None, torch_version: str
    ) -> list[tuple[str, str]] | None:
        """(severity, sentence) about complex operations in the graph; None for what every Neuron compile does."""
        return None

    # ---- the worker's steps ----

    def trace(self, job: JobContext, spec: Any, built: Any, report: Any, kernel: Any) -> Traced:
        raise NotImplementedError

    def verify(self, step: Traced, built: Any, spec: Any, reference: Any) -> dict[str, Any]:
        raise NotImplementedError

    def state_event(self, built: Any) -> dict[str, Any]:
        """The protocol's ``state`` event for a module with state: which tensors, and how this backend keeps them."""
        return {"type": "state", "names": list(built.state), "how": self.keeps_state_as}

    @classmethod
    def reproduce_script(cls, spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None = None) -> str:
        """reproduce.py's text: a standalone script that rebuilds the job's NEFF."""
        raise NotImplementedError
