"""The torchneuron backend's plan, decided without torch: environment, compiler flags, the command, NEFF discovery.

TorchNeuron (torch-neuronx 2.13.3+, Neuron SDK 2.33+) compiles through ``torch.compile(backend="neuron")``,
which takes no compiler arguments, work directory, target or LNC (shared/docs/neuron-facts.md,
"TorchNeuron"). A job reaches it through environment variables only, and points every one that names a
place into the job directory, so that whatever is found there belongs to the job: the NEFF cache, the
debug directory (FX graph, StableHLO) and TorchNeuron's own log. The spec's compiler fields map onto
what TorchNeuron reads: ``NEURON_CC_FLAGS`` and ``NEURON_COMPILER_OPT_LEVEL``. Target and LNC it takes
from the instance and ``NEURON_LOGICAL_NC_CONFIG``, so a spec that says otherwise gets a warning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.backends.compiler_command import LOGFILE_NAME, VERBOSITY
from neffbench.compilerlog.commands import effective_options
from neffbench.schema.problems import Problem

NEFF_CACHE_DIR = "neff_cache"
DEBUG_DIR = "debug"
LOG_NAME = "torchneuron.log"
# The torch device a job compiles on. Tests set it to "cpu" to run against a fake TorchNeuron (a real
# PrivateUse1 "neuron" device needs a C++ allocator); nothing else should.
DEVICE_ENV = "NEFFBENCH_TORCHNEURON_DEVICE"
DEVICE = "neuron"
LNC_ENV = "NEURON_LOGICAL_NC_CONFIG"
TARGET_ENV = "NEURON_PLATFORM_TARGET_OVERRIDE"
# TorchNeuron puts these before NEURON_CC_FLAGS on every compile (its CompileOnlyKernelExecution).
ALWAYS_ADDED = ("--model-type", "transformer", "--auto-cast=none")
# Where TorchNeuron runs neuronx-cc: a temporary directory of its own, which the job never sees.
TMP = "<tmp>"


def device() -> str:
    return os.environ.get(DEVICE_ENV) or DEVICE


def isolation_env(job_dir: str | Path) -> dict[str, str]:
    """What keeps a job's artifacts in its own directory; set before torch_neuronx is imported, since
    its logger and caches may read them once, at the first use."""
    job = Path(job_dir)
    return {
        "TORCH_NEURONX_NEFF_CACHE_DIR": str(job / NEFF_CACHE_DIR),
        "TORCH_NEURONX_DEBUG_DIR": str(job / DEBUG_DIR),
        "TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS": "1",
        # A graph that fails to compile must fail the job: the fallback would run it on the CPU path
        # silently, and the job would look like a compile (the default differs between releases).
        "TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION": "1",
        "TORCH_NEURONX_LOG_FILE": str(job / LOG_NAME),
        "TORCH_NEURONX_LOG_LEVEL": "2",  # INFO: cache misses, stores and executions
    }


def cc_flags(spec: Any, compiler_dir: str | Path | None = None) -> list[str]:
    """``NEURON_CC_FLAGS`` as a list: the spec's options except target, LNC and opt level (TorchNeuron
    passes those itself), with the verbosity that shows passes and, when the path has no blank (TorchNeuron
    splits the variable at whitespace), a ``--logfile`` in the job so the compiler's log streams."""
    c = spec.compiler
    flags = [*VERBOSITY]
    if c.auto_cast != "none":
        flags += ["--auto-cast", c.auto_cast, "--auto-cast-type", c.auto_cast_type]
    else:
        flags += ["--auto-cast", "none"]
    if c.model_type != "generic":
        flags += ["--model-type", c.model_type]
    if c.fast_loading:
        flags.append("--enable-fast-loading-neuron-binaries")
    flags += list(c.extra_args)
    if compiler_dir is not None:
        logfile = str(Path(compiler_dir) / LOGFILE_NAME)
        if not any(ch.isspace() for ch in logfile):
            flags += ["--logfile", logfile]
    return flags


def opt_level(spec: Any) -> str:
    return f"-O{spec.compiler.optlevel}"


def compiler_env(spec: Any, compiler_dir: str | Path | None) -> dict[str, str]:
    return {"NEURON_CC_FLAGS": " ".join(cc_flags(spec, compiler_dir)), "NEURON_COMPILER_OPT_LEVEL": opt_level(spec)}


def job_env(job_dir: str | Path, spec: Any) -> dict[str, str]:
    """Every variable a torchneuron job sets (reproduce.py sets the same)."""
    return {**isolation_env(job_dir), **compiler_env(spec, Path(job_dir) / "compiler")}


@dataclass(frozen=True)
class Host:
    """The target and LNC TorchNeuron will compile for here, and where each was read (None: not known)."""

    target: str | None
    target_source: str
    lnc: int | None
    lnc_source: str


def host(environ: Mapping[str, str] | None = None) -> Host:
    """Read cheaply (no subprocess): the platform override, else the instance type; LNC from its variable."""
    env = os.environ if environ is None else environ
    target: str | None
    if env.get(TARGET_ENV):
        target, target_source = env[TARGET_ENV], TARGET_ENV
    else:
        from neffbench.toolchain.instance import instance_family

        target = instance_family()
        target_source = "the instance type" if target else "no Trn2/Trn3 instance type found"
    lnc_text = env.get(LNC_ENV, "")
    if lnc_text.isdigit():
        return Host(target, target_source, int(lnc_text), LNC_ENV)
    return Host(target, target_source, None, f"{LNC_ENV} unset: the instance's default (2 on Trn2)")


def expected_command(spec: Any, where: Host, flags: list[str]) -> list[str]:
    """The neuronx-cc argv TorchNeuron builds (its NeuronCompiler): target, LNC and opt level first, then
    the flags it always adds, then NEURON_CC_FLAGS; a value it reads from the instance is shown in <>."""
    return [
        "neuronx-cc",
        "compile",
        f"{TMP}/module.mlir",
        "--framework",
        "XLA",
        "--target",
        where.target or "<instance>",
        "--lnc",
        str(where.lnc) if where.lnc else "<instance>",
        opt_level(spec),
        *ALWAYS_ADDED,
        *flags,
        "--output",
        f"{TMP}/module.neff",
    ]


def problems(spec: Any, where: Host) -> list[Problem]:
    """What the spec asks for that a TorchNeuron compile will not do, and which value it uses instead."""
    return [
        *_target_problems(spec.compiler, where),
        *_lnc_problems(spec.compiler, where),
        *_always_added_problems(spec, where),
        *_unsupported_problems(spec.compiler),
    ]


def _target_problems(c: Any, where: Host) -> list[Problem]:
    """The target comes from the instance (or the platform override), never from the spec."""
    out: list[Problem] = []
    if where.target is None:
        out.append(
            Problem(
                "compiler.target",
                f"TorchNeuron compiles for this instance's target, which cannot be told "
                f"here ({where.target_source}); the spec's {c.target} is not passed "
                "to neuronx-cc.",
                "warning",
            )
        )
    elif where.target != c.target:
        out.append(
            Problem(
                "compiler.target",
                f"the spec's target is {c.target}, but TorchNeuron compiles for "
                f"{where.target} ({where.target_source}): {where.target} will be "
                "used.",
                "warning",
            )
        )
    return out


def _lnc_problems(c: Any, where: Host) -> list[Problem]:
    """The LNC comes from its variable (or the instance's default), never from the spec."""
    out: list[Problem] = []
    if where.lnc is not None and c.lnc is not None and c.lnc != where.lnc:
        out.append(
            Problem(
                "compiler.lnc",
                f"the spec's LNC is {c.lnc}, but TorchNeuron compiles with {LNC_ENV}="
                f"{where.lnc}: LNC {where.lnc} will be used (set {LNC_ENV}={c.lnc} "
                "before starting neffbench to compile for it).",
                "warning",
            )
        )
    elif where.lnc is None and c.lnc is not None and not (c.lnc == 2 and where.target == "trn2"):
        out.append(
            Problem(
                "compiler.lnc",
                f"the spec's LNC is {c.lnc}, but TorchNeuron takes the LNC from "
                f"{LNC_ENV}, which is unset: the instance's default will be used (2 on "
                f"Trn2; set {LNC_ENV}={c.lnc} before starting neffbench to compile for "
                f"LNC {c.lnc}).",
                "warning",
            )
        )
    return out


def _always_added_problems(spec: Any, where: Host) -> list[Problem]:
    """The options TorchNeuron always passes, where the spec wants another value and does not undo them."""
    c = spec.compiler
    out: list[Problem] = []
    flags = cc_flags(spec)
    effective = effective_options(expected_command(spec, where, flags))
    spec_values = {"--model-type": ("model_type", c.model_type), "--auto-cast": ("auto_cast", c.auto_cast)}
    added = effective_options(list(ALWAYS_ADDED))
    for opt, value in added.items():
        name, wanted = spec_values[opt]
        if effective.get(opt) != wanted:
            out.append(
                Problem(
                    f"compiler.{name}",
                    f"the spec's {name} is {wanted}, but TorchNeuron always passes "
                    f"{opt} {value} and the spec adds no {opt} of its own to undo "
                    f"it: this compile uses {effective.get(opt)}.",
                    "warning",
                )
            )
    return out


def _unsupported_problems(c: Any) -> list[Problem]:
    """The legacy backend's CPU option, and extra args TorchNeuron would split at their blanks."""
    out: list[Problem] = []
    if c.cpu_backend == "on":
        out.append(
            Problem(
                "compiler.cpu_backend",
                "cpu_backend is torch_neuronx.trace's (the legacy backend); "
                "TorchNeuron has none and compiles on the instance's device.",
                "warning",
            )
        )
    for arg in c.extra_args:
        if any(ch.isspace() for ch in arg):
            out.append(
                Problem(
                    "compiler.extra_args",
                    f"extra arg {arg!r} holds a blank: TorchNeuron splits "
                    "NEURON_CC_FLAGS at whitespace, so neuronx-cc would get it as "
                    "several arguments.",
                    "error",
                )
            )
    return out


def neff_files(job_dir: str | Path) -> list[Path]:
    """The NEFFs a torchneuron job made: the job's own cache, hashed names in nested folders (ab/cd/<hex>.neff)."""
    return sorted(p for p in (Path(job_dir) / NEFF_CACHE_DIR).glob("**/*.neff") if p.is_file())


def debug_artifacts(job_dir: str | Path) -> dict[str, list[str]]:
    """What TorchNeuron kept in the job's debug directory, by kind, as paths relative to the job."""
    job = Path(job_dir)
    out: dict[str, list[str]] = {"fx_graphs": [], "stablehlo": [], "other": []}
    for path in sorted((job / DEBUG_DIR).glob("**/*")):
        if not path.is_file():
            continue
        rel = path.relative_to(job).as_posix()
        if path.name.endswith(".fx.txt"):
            out["fx_graphs"].append(rel)
        elif path.name.endswith(".mlir"):
            out["stablehlo"].append(rel)
        else:
            out["other"].append(rel)
    return out


def match_inputs(
    neff_inputs: list[tuple[str, str | None, tuple[int, ...] | None]], given: list[tuple[str, tuple[int, ...]] | None]
) -> dict[int, str] | None:
    """Which NEFF input each of the job's tensors feeds, by dtype and shape: ``{index in given: NEFF name}``.

    Dynamo orders a graph's inputs by first use, not by argument, so the NEFF's order is its own. Each
    NEFF input, in order, takes the first tensor not yet taken of its dtype (an int64 one standing for
    int32: neuronx-cc downcasts) and shape; ``None`` in ``given`` is a tensor the graph never uses. None
    when a NEFF input finds no tensor (one the job does not have: a weight TorchNeuron lifted, say).
    """
    taken: dict[int, str] = {}
    for name, dtype, shape in neff_inputs:
        for i, sig in enumerate(given):
            if sig is None or i in taken:
                continue
            g_dtype, g_shape = sig
            if (dtype is None or dtype == g_dtype or (g_dtype == "int64" and dtype == "int32")) and (
                shape is None or tuple(shape) == tuple(g_shape)
            ):
                taken[i] = name
                break
        else:
            return None
    return taken
