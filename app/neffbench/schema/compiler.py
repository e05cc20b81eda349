"""The compiler's options every kernel's spec shares: the ``[compiler]`` section, its arguments and its rules."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from neffbench import targets
from neffbench.schema.fields import sections_of, ui
from neffbench.schema.problems import Problem

TARGETS = targets.FAMILIES
LNC_TARGETS = targets.LNC_FAMILIES


@dataclass(frozen=True)
class CompilerSpec:
    """neuronx-cc options; right-most of competing options wins, so extra args come last."""

    target: str = field(
        default="trn1",
        metadata=ui(
            "Target",
            "Neuron instance family to compile for (--target).",
            choices=TARGETS,
            choice_labels={t: targets.family_label(t) for t in TARGETS},
        ),
    )
    lnc: int | None = field(
        default=None,
        metadata=ui(
            "LNC",
            "Logical NeuronCore config (--lnc): physical cores per logical core. Trn2 and later.",
            min=1,
            max=2,
            optional=True,
        ),
    )
    optlevel: int = field(
        default=2,
        metadata=ui("Opt level", "Optimization level (-O1 fast compile, -O2 default, -O3 best runtime).", min=1, max=3),
    )
    auto_cast: str = field(
        default="none",
        metadata=ui(
            "Auto-cast",
            "Let the compiler cast FP32 operations to a faster type (--auto-cast).",
            choices=("none", "matmult", "all"),
            reveals={"none": (), "matmult": ("auto_cast_type",), "all": ("auto_cast_type",)},
        ),
    )
    auto_cast_type: str = field(
        default="bf16",
        metadata=ui(
            "Auto-cast type",
            "Type auto-cast casts to (--auto-cast-type).",
            choices=("bf16", "fp16", "tf32", "fp8_e4m3"),
        ),
    )
    model_type: str = field(
        default="generic",
        metadata=ui(
            "Model type",
            "Model-specific optimizations (--model-type).",
            choices=("generic", "transformer", "unet-inference"),
        ),
    )
    fast_loading: bool = field(
        default=False,
        metadata=ui(
            "Fast-loading NEFF", "Write an uncompressed NEFF that loads faster (--enable-fast-loading-neuron-binaries)."
        ),
    )
    extra_args: tuple[str, ...] = field(
        default=(), metadata=ui("Extra args", "More neuronx-cc arguments, appended last (shell syntax).", advanced=True)
    )
    cpu_backend: str = field(
        default="auto",
        metadata=ui(
            "CPU backend",
            "Trace with torch_neuronx's cpu_backend: auto uses it when no Neuron device is present.",
            choices=("auto", "on", "off"),
            neff=False,
            advanced=True,
        ),
    )
    timeout: float | None = field(
        default=None,
        metadata=ui(
            "Timeout (s)",
            "Stop the compile and mark it failed after this many seconds (unset: no limit).",
            min=1.0,
            max=86_400.0,
            decimals=0,
            neff=False,
            optional=True,
            advanced=True,
        ),
    )


# Options the spec has a field for: giving them in extra args too is a contradiction waiting to happen.
_FIELD_OPTIONS = {
    "--target": "target",
    "--lnc": "lnc",
    "--logical-nc-config": "lnc",
    "--optlevel": "optlevel",
    "--auto-cast": "auto_cast",
    "--auto-cast-type": "auto_cast_type",
    "--model-type": "model_type",
}
# Options the workbench sets itself so that it can find the NEFF and the log.
_RESERVED_OPTIONS = ("--output", "--logfile", "--framework")


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def parse_extra_args(extra: tuple[str, ...] | list[str]) -> list[tuple[str, str | None]]:
    """Pair each option in extra args with its value ('--opt=v', '--opt v', '-O3' all understood)."""
    out: list[tuple[str, str | None]] = []
    tokens = list(extra)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if re.fullmatch(r"-O[0-9]", tok):
            out.append(("--optlevel", tok[2:]))
        elif tok.startswith("--") and "=" in tok:
            opt, value = tok.split("=", 1)
            out.append((opt, value))
        elif tok.startswith("-"):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and not nxt.startswith("-"):
                out.append((tok, nxt))
                i += 1
            else:
                out.append((tok, None))
        i += 1
    return out


def native_int64(extra: tuple[str, ...] | list[str]) -> bool:
    """Whether extra args tell neuronx-cc to keep int64 (``--native-int64=enabled``, the right-most one winning)."""
    values = [value for opt, value in parse_extra_args(extra) if opt == "--native-int64"]
    return bool(values) and values[-1] == "enabled"


def split_extra_args(text: str) -> tuple[str, ...]:
    """Shell-split extra args typed as one line; raises ValueError with shlex's reason."""
    return tuple(shlex.split(text))


def compiler_args(spec: Any) -> list[str]:
    """Arguments passed as ``compiler_args`` to ``torch_neuronx.trace`` (log and output are added by the job)."""
    c = spec.compiler
    args = ["--target", c.target]
    if c.lnc is not None:
        args += ["--lnc", str(c.lnc)]
    args.append(f"-O{c.optlevel}")
    if c.auto_cast != "none":
        args += ["--auto-cast", c.auto_cast, "--auto-cast-type", c.auto_cast_type]
    else:
        args += ["--auto-cast", "none"]
    if c.model_type != "generic":
        args += ["--model-type", c.model_type]
    if c.fast_loading:
        args.append("--enable-fast-loading-neuron-binaries")
    args += list(c.extra_args)
    return args


def compiler_problems(spec: Any, problems: list[Problem]) -> None:
    """The ``[compiler]`` section's own rules: options that contradict its fields, or that change numerics."""
    c = spec.compiler
    if c.lnc is not None and c.target not in LNC_TARGETS:
        problems.append(
            _warning(
                "compiler.lnc",
                f"neuronx-cc documents --lnc for Trn2 and later only; target {c.target} may reject or ignore it.",
            )
        )
    if c.auto_cast != "none":
        problems.append(
            _warning(
                "compiler.auto_cast",
                f"--auto-cast {c.auto_cast} to {c.auto_cast_type} changes "
                "numerics: expect a larger error against the reference.",
            )
        )
    fields = {
        "target": c.target,
        "lnc": c.lnc,
        "optlevel": c.optlevel,
        "auto_cast": c.auto_cast,
        "auto_cast_type": c.auto_cast_type,
        "model_type": c.model_type,
    }
    for opt, value in parse_extra_args(c.extra_args):
        if opt in _RESERVED_OPTIONS:
            problems.append(
                _error(
                    "compiler.extra_args",
                    f"Extra args must not set {opt}: the workbench sets it so that it can find the NEFF and the log.",
                )
            )
        elif opt in _FIELD_OPTIONS:
            name = _FIELD_OPTIONS[opt]
            have = fields[name]
            if value is None or have is None or str(have) != value:
                problems.append(
                    _error(
                        "compiler.extra_args",
                        f"Extra args set {opt} {value or ''}".rstrip()
                        + f" but the {name} field is {'unset' if have is None else have}; set the {name} field "
                        "instead.",
                    )
                )
            else:
                problems.append(
                    _warning("compiler.extra_args", f"{opt} {value} in extra args repeats the {name} field.")
                )
    if native_int64(c.extra_args) and not targets.supports_native_int64(c.target):
        problems.append(
            _error(
                "compiler.extra_args",
                f'--native-int64=enabled is not for target {c.target}: neuronx-cc documents it as "Only available '
                'on trn2 and later" ("On earlier targets int64 operations are always downcast to int32"); remove '
                "it, or compile for trn2 or later.",
            )
        )
    if c.fast_loading and "--enable-fast-loading-neuron-binaries" in c.extra_args:
        problems.append(
            _warning("compiler.extra_args", "--enable-fast-loading-neuron-binaries repeats the fast-loading field.")
        )


def compiler_ignored(spec: Any) -> dict[str, str]:
    """The compiler options the target makes irrelevant (every kernel has the same ``[compiler]``)."""
    if "compiler" not in sections_of(spec):
        return {}
    c = spec.compiler
    out = {}
    if not targets.supports_lnc(c.target):
        out["compiler.lnc"] = (
            f"the target is {c.target}, and neuronx-cc documents --lnc for {'/'.join(targets.LNC_FAMILIES)} only"
        )
    return out
