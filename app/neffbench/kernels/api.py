"""What a kernel contributes to the workbench, and every hook the jobs, records, window and workers may ask of it.

A kernel is a folder (or a plugin package) with a ``Kernel`` subclass instance. Every hook is declared
here, once, with its default, or marked ``@required`` when it has none: the registry rejects a kernel that
leaves a required hook out, defines a public name not declared here, or a hook whose parameters differ
(``neffbench.kernels.hook_checks``), so callers never probe with ``getattr``. What the kernel adds to the command
line is one contribution of its own (``neffbench.kernels.cli_contribution``), and its widgets are named here and
checked by the window when it imports them. The parts that run everywhere (its spec class, validation, buckets,
hash payload) import neither torch nor Qt; the parts marked "torch" run in the worker child or a preview thread
only, and import torch lazily.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from neffbench.kernels.cli_contribution import CliContribution
from neffbench.schema.fields import fields_of, is_active, sections_of, with_ranges
from neffbench.schema.problems import Problem

Bucket = Mapping[str, int]
_Hook = TypeVar("_Hook")


def required(hook: _Hook) -> _Hook:
    """Marks a hook that has no default: every kernel implements it, or the registry refuses the kernel."""
    hook.required = True  # type: ignore[attr-defined]
    return hook


# How a state tensor is named among a Built's inputs and outputs, and so in inputs.npz and reference.npz
# (``state:layers.0.attention.kv_cache.k_cache``).
STATE_PREFIX = "state:"


@dataclass(frozen=True)
class TensorSig:
    """One NEFF input or output as torch_neuronx names it (input0..N, output0..M)."""

    name: str
    role: str  # what it is to the kernel: positions, query, x, input_ids, last_hidden_state, ...
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class ValueRange:
    """The whole numbers an input is declared to hold, ``low`` to ``high`` inclusive, and the words that declare
    them (``randint(0, 1000)``, ``file("ids.npy")``): what any seed may draw, not only the example's values."""

    low: int
    high: int
    declared: str


@dataclass
class Built:
    """What a job traces: the module, its example inputs in argument order, and their names.

    ``module`` takes tensors only and returns a tensor or a flat tuple of tensors. ``info`` goes into
    ``job.json`` under ``kernel_info`` (for the module kernel: entry, resolved name, file sha256, ...).
    ``value_ranges``: the declared ranges of integer inputs, by name; pre-flight reads the example's own
    values for an input without one.
    """

    module: Any
    inputs: tuple[Any, ...]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Names of the module's state (parameters or buffers its forward writes, lifted out of it): the last
    # ``len(state)`` of ``inputs`` are their values before the call and of the outputs their values after, and
    # ``module.kept(parameters)`` is the module keeping them inside instead (for a device that holds state).
    state: tuple[str, ...] = ()
    # What the kernel's own call of the module while building returned (its outputs, state left out), when it
    # made one: a second call with the same inputs must return the same.
    eager_outputs: tuple[Any, ...] | None = None
    # The prefix of the user's module's parameter and buffer names inside ``module`` (``inner.`` for a wrapper):
    # messages name them as the user's own module does.
    path_prefix: str = ""
    value_ranges: dict[str, ValueRange] = field(default_factory=dict)


class KernelError(Exception):
    """A problem only building the kernel can find (an entry that does not resolve, an input that
    names no parameter): one sentence, which the job reports as its failure reason."""


class Kernel:
    """Base class: override what differs, and implement the hooks marked ``@required`` (``build`` and
    ``reproduce_source``). Methods marked (torch) import torch and run in the worker.

    Attributes and methods not defined here are refused when the kernel loads (names starting with
    ``_`` are the kernel's own). A kernel whose buckets are token counts starts from
    ``neffbench.kernels.token.TokenKernel`` instead.
    """

    name: str = ""
    title: str = ""
    summary: str = ""
    spec_class: type = object
    # Folder of ``*.toml`` presets this kernel brings (each file says ``kernel = "<name>"``): a contribution the
    # preset menu and ``neffbench preset list`` enumerate, for a built-in kernel as for a plugin.
    preset_dir: Path | None = None
    # Qualified names ("module:attr") of Qt widgets this kernel contributes, imported by the window on first
    # use only (a kernel keeps them in its own ``gui/`` folder): a preview panel taking (parent) with
    # ``show_preview(data)``, and a spec form. None: the generic ones.
    gui_preview: str | None = None
    gui_form: str | None = None
    # Whether building the kernel runs the user's code: ``neffbench check`` then also runs pre-flight
    # in a probe child, since only running it can tell whether the inputs bind and the outputs trace.
    runs_user_code: bool = False
    # Form titles of the kernel's own sections (by section name); others are titled by their name.
    section_titles: dict[str, str] = {}
    # Spec fields whose range the kernel checks itself (section.name), so the generic check skips them.
    own_range_checks: frozenset[str] = frozenset()
    # What the kernel adds to the ``neffbench`` command (SPEC forms, options, subcommands, preview choices):
    # ``neffbench.kernels.cli_contribution``. The default adds nothing.
    cli: CliContribution = CliContribution()
    # Requests its probe child answers, by name: "module:function" taking the request dict and returning the
    # report (for what only running the user's code can tell).
    probe_requests: dict[str, str] = {}

    # ---- spec (no torch) ---------------------------------------------------------------------

    def default_spec(self) -> Any:
        return self.spec_class()

    def validate(self, spec: Any) -> list[Problem]:
        """The kernel's own rules; the generic ranges, name, workdir and compiler rules are checked elsewhere."""
        return []

    def section_errors(self, spec: Any) -> list[Problem]:
        """The errors in the kernel's own fields (its rules and the generic ranges): what a preview refuses."""
        problems = with_ranges(spec, self.validate(spec), self.own_range_checks)
        return [p for p in problems if p.severity == "error"]

    def ignored_fields(self, spec: Any) -> dict[str, str]:
        """Fields the spec's other values make irrelevant, by ``section.name``, each with the reason a user
        reads ("rotary_dim is set, and it wins"). The form disables them and spec files mark their values.

        Only what the kernel knows: fields a choice hides (``ui(reveals=...)``) and the compiler's options
        are covered for every kernel by ``neffbench.spec.ignored``.
        """
        return {}

    def anchor(self, spec: Any, base_dir: Path) -> Any:
        """The spec with the relative paths it holds made absolute against ``base_dir`` (a spec file's folder, or
        where the command was typed), as ``neffbench.spec.anchored`` asks once. Default: as it is."""
        return spec

    def neff_relevant(self, spec: Any) -> dict[str, Any]:
        """What can change the NEFF: every active field marked ``neff``, by section (plus the kernel's name)."""
        out: dict[str, Any] = {"kernel": self.name}
        for section in sections_of(spec):
            body: dict[str, Any] = {}
            for f in fields_of(spec, section):
                if f.metadata.get("neff", True) and is_active(spec, section, f.name):
                    value = getattr(getattr(spec, section), f.name)
                    body[f.name] = list(value) if isinstance(value, tuple) else value
            out[section] = body
        return out

    def sources_key(self, spec: Any) -> dict[str, Any]:
        """What decides which files a build reads (for the module kernel its [module] section, not the inputs or
        the bucket): builds with equal keys read the same files while those files are unchanged, so a closure
        recorded by one is checked, not rediscovered, by the next."""
        return self.neff_relevant(spec)

    def dtype(self, spec: Any) -> str:
        """The dtype that sets the numerics tolerance."""
        return spec.inputs.dtype

    def seed(self, spec: Any) -> int:
        return spec.inputs.seed

    def with_seed(self, spec: Any, seed: int) -> Any:
        return dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, seed=seed))

    def preset_figures(self, data: dict[str, Any]) -> str | None:
        """A preset's key figures for the preset menu, from the file's table (not loaded); None: the text of
        its description after the model's name."""
        return None

    # ---- buckets (no torch) ------------------------------------------------------------------

    def buckets(self, spec: Any) -> list[dict[str, int]]:
        """One dict per NEFF to compile, in order (shapes are fixed at trace time). Default: one, with no axes."""
        return [{}]

    def for_bucket(self, spec: Any, bucket: Bucket) -> Any:
        """The single-bucket spec one job compiles."""
        return spec

    def pick_bucket(self, spec: Any, value: int) -> dict[str, int] | None:
        """The bucket a single number names (``neffbench preview --at N``, the preview's bucket box); None when
        none of the spec's does. Default: the bucket whose one axis has that value."""
        return next((b for b in self.buckets(spec) if list(b.values()) == [value]), None)

    def items_per_call(self, bucket: Bucket) -> int:
        """What throughput counts (tokens for the vLLM kernels)."""
        return 1

    def io_signature(self, spec: Any) -> tuple[list[TensorSig], list[TensorSig]] | None:
        """What the NEFF will take and return, without building a tensor; None when only a build can tell."""
        return None

    def compile_data_bytes(self, spec: Any) -> int | None:
        """Bytes of what compiling this single-bucket spec holds as data (inputs, outputs, traced tables), without
        importing torch: a sweep's memory limiter reserves several times that on top of its baseline by backend
        and target (``neffbench.jobs.memory_estimate``). None (the default): the baseline alone."""
        return None

    # ---- the Python API (no torch) -------------------------------------------------------------

    def spec_from_object(self, obj: Any, saved: Any) -> Any | None:
        """The spec that compiles ``obj``, an object in memory (what ``neffbench.trace`` is given), called with the
        inputs ``saved`` holds (``neffbench.kernels.saved.SavedCall``: the object and inputs as files); None: not
        this kernel's."""
        return None

    # ---- torch ------------------------------------------------------------------------------

    def preload(self) -> None:
        """Import what ``build`` needs, so that a worker started before its job has it ready."""

    @required
    def build(self, spec: Any) -> Built:
        """The module and its example inputs for a single-bucket spec."""
        raise NotImplementedError

    def prepare_key(self, spec: Any) -> dict[str, Any]:
        """What decides the object ``prepare`` makes (the files read, the inputs, the constants): sweep points with
        equal keys prepare the same build, so one probe answers for all of them. Default: the sources key and
        every field that can change the NEFF."""
        return {"sources": self.sources_key(spec), "spec": self.neff_relevant(spec)}

    def prepare(self, spec: Any) -> Any:
        """What a compile of a kernel that ``runs_user_code`` checks in a probe before any job starts (the entry
        resolves, the module is made, the inputs bind), raising KernelError with the problem; returns the object
        made, whose code names the distributions recorded. Default: nothing to check."""
        return None

    def explain_trace_failure(self, text: str) -> str | None:
        """One sentence for a trace that failed in a way this kernel's modules are known to (``text``: the error with
        its traceback), said to the user instead of the bare error; None: not one of them. Every kernel is asked,
        since a traced module may hold another kernel's (the module kernel knows transformers' vmap masks)."""
        return None

    def example_inputs(self, spec: Any) -> tuple[Any, ...]:
        """Example inputs of a single-bucket spec (verification asks again with another seed)."""
        return self.build(spec).inputs

    def step_inputs(self, spec: Any, step: int, consumed: Mapping[str, int]) -> tuple[Any, ...]:
        """(torch) The inputs of call ``step`` (0 is the first) of a module with state, carried from call to call
        (the state itself is left out: it comes from the call before). ``consumed``: how many elements each input
        took in the calls before, whatever bucket they were made for, so that positions go on where the previous
        call stopped (a prefill, then decode steps). Default: the example inputs with the seed moved on by
        ``step``."""
        return self.example_inputs(self.with_seed(spec, self.seed(spec) + step))

    def with_state(self, spec: Any, names: list[str]) -> Any | None:
        """``spec`` keeping ``names`` (parameters or buffers its forward writes, which pre-flight found) as the
        module's state: the window's one click. None (the default): this kernel has no way to keep state."""
        return None

    def state_remedy(self, names: list[str]) -> str:
        """How a spec of this kernel keeps ``names`` (parameters or buffers its forward writes) from call to call:
        the end of pre-flight's sentence about them. Default: this kernel has no way to, so the forward must
        return what it writes instead."""
        return "return the new values as outputs instead of writing them into the module"

    @required
    def reproduce_source(self, spec: Any, built: Built) -> str:
        """Python source for ``reproduce.py`` that defines ``build_module()`` and ``example_inputs()``
        with this job's values, using torch alone (and the user's own code for the module kernel)."""
        raise NotImplementedError

    def reproduce_needs(self, spec: Any) -> str:
        """A sentence ``reproduce.py``'s docstring adds about what else it needs (the user's code); "" for none."""
        return ""

    def preview_preload(self) -> None:
        """Import what ``preview`` needs, on the window's background thread before the first preview."""

    def preview(self, spec: Any, bucket: Bucket | None = None) -> Any:
        """Preview data for ``gui_preview`` (and ``neffbench preview``); None: the generic one."""
        return None
