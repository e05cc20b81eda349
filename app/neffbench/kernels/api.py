"""What a kernel contributes to the workbench, and every hook the jobs, records, GUI and CLI may ask of it.

A kernel is a folder (or a plugin package) with a ``Kernel`` subclass instance. Every hook is declared
here, once, with its default: the registry rejects a kernel that defines a public name not declared
here, or a hook whose parameters differ (``neffbench.kernels.checks``), so callers never probe with
``getattr``. The parts that run everywhere (its spec class, validation, buckets, hash payload) import
neither torch nor Qt; the parts marked "torch" run in the worker child or a preview thread only, and
import torch lazily.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.schema.fields import fields_of, is_active, sections_of, with_ranges
from neffbench.schema.problems import Problem
from neffbench.words import plural

Bucket = Mapping[str, int]
# Bucket axes whose values read as a count in sentences and tables ("8 tokens"): a bucket of that axis
# alone is shown by its number.
COUNTED_AXES = {"num_tokens": "tokens"}
_SINGULAR = {"tokens": "token"}  # "1 token", not "1 tokens"

# Tolerances for traced-vs-eager and device-vs-reference comparisons. float32 allows a few ulps of
# reassociation; bfloat16 keeps 8 mantissa bits (eps 2**-7) and float16 11 (eps 2**-10), and one
# rotation does two products and a sum, so a couple of eps of |x| plus rounding of the result.
TOLERANCES: dict[str, tuple[float, float]] = {  # dtype: (atol, rtol)
    "float32": (1e-5, 1e-5),
    "bfloat16": (3e-2, 1.6e-2),
    "float16": (4e-3, 2e-3),
    # Only the module kernel has these: float64 inputs, and integer-only outputs (which must be equal).
    "float64": (1e-9, 1e-9),
    "int": (0.0, 0.0),
}


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
    """Base class: override what differs. Methods marked (torch) import torch and run in the worker.

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
    # What ``neffbench compile SPEC`` accepts as SPEC besides files and presets (``spec_from_source``), in
    # the words of ``--help``; empty for a kernel that takes only files.
    source_help: str = ""
    # Subcommands of ``neffbench`` this kernel brings, by name: a module whose ``register(subparsers)`` adds it,
    # as the CLI's own command modules do. And requests its probe child answers, by name: "module:function"
    # taking the request dict and returning the report (for what only running the user's code can tell).
    commands: dict[str, str] = {}
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
        and target (``neffbench.sweeps.memory``). None (the default): the baseline alone."""
        return None

    # ---- command line (no torch) -------------------------------------------------------------

    def spec_from_source(self, source: str) -> Any | None:
        """The spec SPEC names when it is neither a file nor a preset (``FILE.py:NAME``); None: not this kernel's."""
        return None

    def spec_from_object(self, obj: Any, saved: Any) -> Any | None:
        """The spec that compiles ``obj``, an object in memory (what ``neffbench.trace`` is given), called with the
        inputs ``saved`` holds (``neffbench.kernels.saved.SavedCall``: the object and inputs as files); None: not
        this kernel's."""
        return None

    def add_cli_options(self, group: argparse._ArgumentGroup) -> None:
        """Options of the kernel's own beyond one per spec field (repeatable ones that set its tables)."""

    def apply_cli_options(self, spec: Any, args: argparse.Namespace) -> Any:
        """The spec with this kernel's own options applied; ``spec`` may be another kernel's, which those
        options must then refuse if given. Default: ``spec`` as it is."""
        return spec

    # ---- torch ------------------------------------------------------------------------------

    def preload(self) -> None:
        """Import what ``build`` needs, so that a worker started before its job has it ready."""

    def build(self, spec: Any) -> Built:  # pragma: no cover - every kernel overrides it
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

    # ---- neffbench preview (no torch) ----------------------------------------------------------

    def add_preview_options(self, group: argparse._ArgumentGroup) -> None:
        """Options of ``neffbench preview`` that choose what this kernel's panel draws (RoPE: the token and head
        whose lanes are plotted). Every kernel's are offered, as for ``add_cli_options``."""

    def preview_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The keyword arguments those options give the panel's ``save_images``. Default: none."""
        return {}

    def preview_numbers(self, preview: Any) -> dict[str, Any]:
        """What ``neffbench preview`` writes to preview.json for this kernel's preview data."""
        return preview.to_json()

    def preview_summary(self, preview: Any) -> list[str]:
        """Lines ``neffbench preview`` prints after the files it wrote (RoPE: its pair-norm check). Default: none."""
        return []


def bucket_label(bucket: Bucket | None) -> str:
    """``num_tokens=8`` or ``batch=1 seq=128``: how a bucket reads in logs and tables."""
    if not bucket:
        return "-"
    return " ".join(f"{k}={v}" for k, v in bucket.items())


def _counted(bucket: Bucket | None) -> tuple[str, int] | None:
    """(unit, count) for a bucket of one counted axis alone (``{"num_tokens": 8}``: ("tokens", 8))."""
    if bucket and len(bucket) == 1:
        ((axis, value),) = bucket.items()
        if axis in COUNTED_AXES:
            return COUNTED_AXES[axis], value
    return None


def buckets_text(buckets: list[dict[str, int]]) -> str:
    """``1, 8 tokens`` or ``batch=1 seq=128; batch=1 seq=512``."""
    if buckets == [{}]:
        return "no bucket axes"
    counted = [c for c in map(_counted, buckets) if c is not None]
    if buckets and len(counted) == len(buckets) and len({c[0] for c in counted}) == 1:
        unit = counted[0][0]
        one = len(counted) == 1 and counted[0][1] == 1
        return f"{', '.join(str(c[1]) for c in counted)} {_SINGULAR.get(unit, unit) if one else unit}"
    return "; ".join(bucket_label(b) for b in buckets)


def bucket_phrase(bucket: Bucket | None) -> str:
    """``8 tokens`` for the vLLM kernels, ``batch=1 seq=128`` otherwise: a bucket in a sentence."""
    counted = _counted(bucket)
    if not counted:
        return bucket_label(bucket)
    unit, n = counted
    return plural(n, _SINGULAR.get(unit, unit), unit)


def bucket_cell(bucket: Bucket | None) -> str:
    """A results table's bucket column: the count alone (``8``), else ``batch=1 seq=128`` (``?`` for none)."""
    counted = _counted(bucket)
    if counted:
        return str(counted[1])
    return bucket_label(bucket) if bucket else "?"


def items_unit(buckets: list[Bucket]) -> str | None:
    """What the items of throughput are when every bucket counts the same unit (``tokens``), else None."""
    units = {c[0] if c else None for c in map(_counted, buckets)}
    return units.pop() if len(units) == 1 else None
