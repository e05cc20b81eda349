"""``compiler_args`` as ``torch_neuronx.trace`` takes them, read into a spec's ``[compiler]`` section.

torch_neuronx appends them after its defaults (``--framework XLA --target trn1``), so the right-most of competing
options wins; the options the section has a field for go there (so a job shows them as fields), the rest into
``extra_args`` in their order. Without ``--target`` the target is this host's instance family, as the real trace
detects it, else trn1, its default.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from typing import Any

from neffbench.schema import CompilerSpec

# Option -> field, and how its value reads.
_FIELDS: dict[str, tuple[str, Any]] = {
    "--target": ("target", str),
    "--lnc": ("lnc", int),
    "--logical-nc-config": ("lnc", int),
    "--optlevel": ("optlevel", int),
    "--auto-cast": ("auto_cast", str),
    "--auto-cast-type": ("auto_cast_type", str),
    "--model-type": ("model_type", str),
}
# The workbench sets these itself, so that it finds the NEFF and the log in the job.
_SET_BY_THE_JOB = ("--output", "--logfile", "--framework")


def tokens(compiler_args: str | Sequence[str] | None) -> list[str]:
    """torch_neuronx's reading: a string is shell-split, a list taken as it is."""
    if compiler_args is None:
        return []
    if isinstance(compiler_args, str):
        return shlex.split(compiler_args)
    return [str(a) for a in compiler_args]


def compiler_spec(
    compiler_args: str | Sequence[str] | None, *, cpu_backend: bool = False, host_family: str | None = None
) -> tuple[CompilerSpec, list[str]]:
    """The section, and a sentence for each argument the job sets itself and so leaves out."""
    args = tokens(compiler_args)
    values: dict[str, Any] = {"target": host_family or CompilerSpec.target}
    extra: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        option, has_value, value = token.partition("=")
        takes_value = option in _FIELDS or option in _SET_BY_THE_JOB
        if takes_value and not has_value and i + 1 < len(args):
            i += 1
            value = args[i]
        if re.fullmatch(r"-O[0-9]", token):
            values["optlevel"] = int(token[2:])
        elif option in _FIELDS:
            name, kind = _FIELDS[option]
            try:
                values[name] = kind(value)
            except ValueError:
                raise ValueError(f"compiler_args: {option} takes a whole number, not {value!r}") from None
        elif option == "--enable-fast-loading-neuron-binaries":
            values["fast_loading"] = True
        elif option in _SET_BY_THE_JOB:
            notes.append(f"{option} {value} left out: the job sets {option} itself (the NEFF and log are in the job)")
        else:
            extra.append(token)
        i += 1
    spec = dataclasses.replace(
        CompilerSpec(), **values, extra_args=tuple(extra), cpu_backend="on" if cpu_backend else "auto"
    )
    return spec, notes
