"""The one description of every compile parameter: frozen dataclasses whose field metadata drives forms, CLI and files.

A spec is a frozen dataclass of its kernel (``kernel`` is a class variable naming it): a few top
fields (name, description, workdir), sections that are dataclasses themselves (RoPE's ``model``,
``rope``, ``inputs``; every kernel's ``compiler``) and, for kernels that need them, free tables
(``dict`` fields: the module kernel's inputs by name and its bucket axes). This module holds what
every kernel shares; each kernel's own sections live in its folder under ``neffbench.kernels``.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field
from typing import Any

from neffbench import targets

DTYPES = ("float32", "bfloat16", "float16")
TARGETS = targets.FAMILIES


def ui(
    label: str,
    help: str,
    *,
    min: float | None = None,
    max: float | None = None,
    step: float | None = None,
    decimals: int | None = None,
    choices: tuple[str, ...] | None = None,
    choice_labels: dict[str, str] | None = None,
    reveals: dict[str, tuple[str, ...]] | None = None,
    neff: bool = True,
    optional: bool = False,
    advanced: bool = False,
) -> dict[str, Any]:
    """Field metadata shared by every consumer of the spec.

    ``neff`` says whether the value can change the compiled NEFF (it then enters the spec hash);
    ``choice_labels`` gives a choice the text a user reads (the value stays what files hold);
    ``reveals`` maps a choice to the sibling fields it makes active; ``optional`` means ``None``
    is a legal value (left out of files).
    """
    return {
        "label": label,
        "help": help,
        "min": min,
        "max": max,
        "step": step,
        "decimals": decimals,
        "choices": choices,
        "choice_labels": choice_labels,
        "reveals": reveals,
        "neff": neff,
        "optional": optional,
        "advanced": advanced,
    }


@dataclass(frozen=True)
class CompilerSpec:
    """neuronx-cc options; right-most of competing options wins, so extra args come last."""

    target: str = field(default="trn1", metadata=ui(
        "Target", "Neuron instance family to compile for (--target).",
        choices=TARGETS, choice_labels={t: targets.family_label(t) for t in TARGETS}))
    lnc: int | None = field(default=None, metadata=ui(
        "LNC", "Logical NeuronCore config (--lnc): physical cores per logical core. Trn2 and later.",
        min=1, max=2, optional=True))
    optlevel: int = field(default=2, metadata=ui(
        "Opt level", "Optimization level (-O1 fast compile, -O2 default, -O3 best runtime).", min=1, max=3))
    auto_cast: str = field(default="none", metadata=ui(
        "Auto-cast", "Let the compiler cast FP32 operations to a faster type (--auto-cast).",
        choices=("none", "matmult", "all"),
        reveals={"none": (), "matmult": ("auto_cast_type",), "all": ("auto_cast_type",)}))
    auto_cast_type: str = field(default="bf16", metadata=ui(
        "Auto-cast type", "Type auto-cast casts to (--auto-cast-type).", choices=("bf16", "fp16", "tf32", "fp8_e4m3")))
    model_type: str = field(default="generic", metadata=ui(
        "Model type", "Model-specific optimizations (--model-type).", choices=("generic", "transformer", "unet-inference")))
    fast_loading: bool = field(default=False, metadata=ui(
        "Fast-loading NEFF", "Write an uncompressed NEFF that loads faster (--enable-fast-loading-neuron-binaries)."))
    extra_args: tuple[str, ...] = field(default=(), metadata=ui(
        "Extra args", "More neuronx-cc arguments, appended last (shell syntax).", advanced=True))
    cpu_backend: str = field(default="auto", metadata=ui(
        "CPU backend", "Trace with torch_neuronx's cpu_backend: auto uses it when no Neuron device is present.",
        choices=("auto", "on", "off"), neff=False, advanced=True))
    timeout: float | None = field(default=None, metadata=ui(
        "Timeout (s)", "Stop the compile and mark it failed after this many seconds (unset: no limit).",
        min=1.0, max=86_400.0, decimals=0, neff=False, optional=True, advanced=True))


# The top fields every kernel's spec starts with, in this order (a dataclass cannot inherit
# defaults before non-defaults, so kernels declare them through ``job_fields`` below).
def name_field(default: str) -> Any:
    return field(default=default, metadata=ui(
        "Name", "Names the job directories (letters, digits, '-', '_', '.').", neff=False))


def description_field() -> Any:
    return field(default="", metadata=ui(
        "Description", "Free text; presets name their sources here.", neff=False, advanced=True))


def workdir_field() -> Any:
    return field(default="neffbench-workdir", metadata=ui(
        "Workdir", "Directory that receives one job directory per compile.", neff=False))


def compiler_field() -> Any:
    return field(default_factory=CompilerSpec)


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    # Spec classes never change once defined; get_type_hints evaluates every annotation each call.
    return typing.get_type_hints(cls)


def sections_of(spec: Any) -> dict[str, type]:
    """The spec's dataclass sections (``[model]``, ``[compiler]``, ...) in declaration order."""
    cls = spec if isinstance(spec, type) else type(spec)
    hints = _hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)
            if isinstance(hints[f.name], type) and dataclasses.is_dataclass(hints[f.name])}


def tables_of(spec: Any) -> dict[str, Any]:
    """The spec's free tables (``dict`` fields at the top level, e.g. the module kernel's ``[inputs]``)."""
    cls = spec if isinstance(spec, type) else type(spec)
    hints = _hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if typing.get_origin(hints[f.name]) is dict}


def top_fields_of(spec: Any) -> tuple[dataclasses.Field, ...]:
    cls = spec if isinstance(spec, type) else type(spec)
    skip = set(sections_of(cls)) | set(tables_of(cls))
    return tuple(f for f in dataclasses.fields(cls) if f.name not in skip)


def fields_of(spec: Any, section: str) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(sections_of(spec)[section])


def is_active(spec: Any, section: str, name: str) -> bool:
    """Whether a field means anything given the choices made elsewhere in its section."""
    sect = getattr(spec, section)
    for f in fields_of(spec, section):
        reveals = f.metadata.get("reveals")
        if not reveals:
            continue
        controlled = {n for names in reveals.values() for n in names}
        if name in controlled:
            return name in reveals.get(getattr(sect, f.name), ())
    return True


def kernel_of(spec: Any) -> str:
    from neffbench.kernels.registry import DEFAULT

    return getattr(spec, "kernel", DEFAULT)
