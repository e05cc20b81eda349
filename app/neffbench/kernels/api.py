"""What a kernel contributes to the workbench, and what the jobs, records, GUI and CLI may ask of it.

A kernel is a folder (or a plugin package) with a ``Kernel`` subclass instance. The parts that run
everywhere (its spec class, validation, buckets, hash payload) import neither torch nor Qt; the parts
marked "torch" run in the worker child or a preview thread only, and import torch lazily.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from neffbench.spec.problems import Problem
from neffbench.spec.schema import fields_of, is_active, sections_of

Bucket = Mapping[str, int]

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


@dataclass(frozen=True)
class TensorSig:
    """One NEFF input or output as torch_neuronx names it (input0..N, output0..M)."""

    name: str
    role: str  # what it is to the kernel: positions, query, x, input_ids, last_hidden_state, ...
    dtype: str
    shape: tuple[int, ...]


@dataclass
class Built:
    """What a job traces: the module, its example inputs in argument order, and their names.

    ``module`` takes tensors only and returns a tensor or a flat tuple of tensors. ``info`` goes into
    ``job.json`` under ``kernel_info`` (for the module kernel: entry, resolved name, file sha256, ...).
    ``float64`` builds the same module and inputs in float64 for the dtype-cost comparison, or is None
    where the module does not allow it.
    """

    module: Any
    inputs: tuple[Any, ...]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class KernelError(Exception):
    """A problem only building the kernel can find (an entry that does not resolve, an input that
    names no parameter): one sentence, which the job reports as its failure reason."""


class Kernel:
    """Base class: override what differs. Methods marked (torch) import torch and run in the worker."""

    name: str = ""
    title: str = ""
    summary: str = ""
    spec_class: type = object
    # Folder of ``*.toml`` presets this kernel brings (each file says ``kernel = "<name>"``).
    preset_dir: Path | None = None
    # Qualified names ("module:attr") of Qt widgets for this kernel, loaded by the GUI on first use:
    # a preview panel taking (parent) with ``show_preview(data)``, and a spec form. None: the generic ones.
    gui_preview: str | None = None
    gui_form: str | None = None
    # Whether building the kernel runs the user's code: ``neffbench check`` then also runs pre-flight
    # in a probe child, since only running it can tell whether the inputs bind and the outputs trace.
    runs_user_code: bool = False
    # Form titles of the kernel's own sections (by section name); others are titled by their name.
    section_titles: dict[str, str] = {}
    # Spec fields whose range the kernel checks itself (section.name), so the generic check skips them.
    own_range_checks: frozenset[str] = frozenset()

    # ---- everywhere (no torch) -------------------------------------------------------------

    def default_spec(self) -> Any:
        return self.spec_class()

    def validate(self, spec: Any) -> list[Problem]:
        """The kernel's own rules; the generic ranges, name, workdir and compiler rules are checked elsewhere."""
        return []

    def ignored_fields(self, spec: Any) -> dict[str, str]:
        """Fields the spec's other values make irrelevant, by ``section.name``, each with the reason a user
        reads ("rotary_dim is set, and it wins"). The form disables them and spec files mark their values.

        Only what the kernel knows: fields a choice hides (``ui(reveals=...)``) and the compiler's options
        are covered for every kernel by ``neffbench.spec.ignored``.
        """
        return {}

    def buckets(self, spec: Any) -> list[dict[str, int]]:
        """One dict per NEFF to compile, in order (shapes are fixed at trace time)."""
        return [{"num_tokens": n} for n in spec.inputs.num_tokens]

    def for_bucket(self, spec: Any, bucket: Bucket) -> Any:
        """The single-bucket spec one job compiles."""
        return dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, num_tokens=(bucket["num_tokens"],)))

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

    def dtype(self, spec: Any) -> str:
        """The dtype that sets the numerics tolerance."""
        return spec.inputs.dtype

    def seed(self, spec: Any) -> int:
        return spec.inputs.seed

    def with_seed(self, spec: Any, seed: int) -> Any:
        return dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, seed=seed))

    def sources_key(self, spec: Any) -> dict[str, Any]:
        """What decides which files a build reads (for the module kernel its [module] section, not the inputs or
        the bucket): builds with equal keys read the same files while those files are unchanged, so a closure
        recorded by one is checked, not rediscovered, by the next."""
        return self.neff_relevant(spec)

    def io_signature(self, spec: Any) -> tuple[list[TensorSig], list[TensorSig]] | None:
        """What the NEFF will take and return, without building a tensor; None when only a build can tell."""
        return None

    def items_per_call(self, bucket: Bucket) -> int:
        """What throughput counts (tokens for the vLLM kernels)."""
        return int(bucket.get("num_tokens", 1))

    def compile_memory(self, spec: Any, backend: str) -> int | None:
        """Bytes compiling this single-bucket spec with ``backend`` (``cpu-check``, or one that runs neuronx-cc)
        may take at its peak, worker and compiler together: what a sweep's memory limiter and Ray's memory
        resource reserve. Must not import torch. None (the default): ``neffbench.sweeps.memory.baseline``, by
        backend and target; a kernel whose data can be large adds it (``TENSOR_FACTOR`` times its bytes)."""
        return None

    # ---- torch ------------------------------------------------------------------------------

    def preload(self) -> None:
        """Import what ``build`` needs, so that a worker started before its job has it ready."""

    def build(self, spec: Any) -> Built:  # pragma: no cover - every kernel overrides it
        raise NotImplementedError

    def prepare(self, spec: Any) -> Any:
        """What a compile of a kernel that ``runs_user_code`` checks in a probe before any job starts (the entry
        resolves, the module is made, the inputs bind), raising KernelError with the problem; returns the object
        made, whose code names the distributions recorded. Default: nothing to check."""
        return None

    def example_inputs(self, spec: Any) -> tuple[Any, ...]:
        """Example inputs of a single-bucket spec (verification asks again with another seed)."""
        return self.build(spec).inputs

    def reproduce_source(self, spec: Any, built: Built) -> str:
        """Python source for ``reproduce.py`` that defines ``build_module()`` and ``example_inputs()``
        with this job's values, using torch alone (and the user's own code for the module kernel)."""
        raise NotImplementedError

    def preview_preload(self) -> None:
        """Import what ``preview`` needs, on the window's background thread before the first preview."""

    def preview(self, spec: Any, bucket: Bucket | None = None) -> Any:
        """Preview data for ``gui_preview`` (and ``neffbench preview``); None: the generic one."""
        return None


def bucket_label(bucket: Bucket | None) -> str:
    """``num_tokens=8`` or ``batch=1 seq=128``: how a bucket reads in logs and tables."""
    if not bucket:
        return "-"
    return " ".join(f"{k}={v}" for k, v in bucket.items())


def describe_buckets(spec: Any) -> str:
    """``2 bucket(s): 1, 8 tokens`` or ``2 bucket(s): batch=1 seq=128; batch=1 seq=512``."""
    from neffbench.kernels import registry

    buckets = registry.for_spec(spec).buckets(spec)
    return f"{len(buckets)} bucket(s): {buckets_text(buckets)}"


def buckets_text(buckets: list[dict[str, int]]) -> str:
    """``1, 8 tokens`` or ``batch=1 seq=128; batch=1 seq=512``."""
    if buckets == [{}]:
        return "no bucket axes"
    if buckets and all(list(b) == ["num_tokens"] for b in buckets):
        return f"{', '.join(str(b['num_tokens']) for b in buckets)} tokens"
    return "; ".join(bucket_label(b) for b in buckets)


def bucket_phrase(bucket: Bucket | None) -> str:
    """``8 tokens`` for the vLLM kernels, ``batch=1 seq=128`` otherwise: a bucket in a sentence."""
    if bucket and list(bucket) == ["num_tokens"]:
        return f"{bucket['num_tokens']} tokens"
    return bucket_label(bucket)
