"""reproduce.py for the torch_neuronx.trace backends (neuron, and cpu-check's script that makes the NEFF it did
not): ``templates/legacy_reproduce.py`` filled with the equivalent neuronx-cc command and the job's compiler
arguments."""

from __future__ import annotations

from typing import Any

from neffbench.backends.compiler_command import base_args, equivalent_command, job_compiler_args, shell_line
from neffbench.backends.reproduce_script import TEMPLATES, job_values
from neffbench.kernels.api import Built
from neffbench.kernels.script_template import fill
from neffbench.toolchain.devices import DEVICE_GLOB

_OUT = "OUTPUT_DIR"


def _wrap_command(argv: list[str], width: int = 92) -> list[str]:
    """Shell lines that never separate an option from its value."""
    groups: list[list[str]] = []
    for tok in argv:
        if tok.startswith("-") or not groups:
            groups.append([tok])
        else:
            groups[-1].append(tok)
    lines: list[str] = []
    for group in groups:
        text = shell_line(group)
        if lines and len(lines[-1]) + 1 + len(text) <= width:
            lines[-1] += " " + text
        else:
            lines.append(text)
    return lines


def render(spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None = None, note: str = "") -> str:
    """The script's text for a single-bucket spec (``built``: what the job traced; the module kernel's wrapper
    needs it); ``note``: comment lines that follow the docstring."""
    args = job_compiler_args(spec, f"{_OUT}/compiler")
    wrapped = _wrap_command(equivalent_command(f"{_OUT}/compiler", args))
    ends = [" \\"] * (len(wrapped) - 1) + [""]
    return fill(
        TEMPLATES / "legacy_reproduce.py",
        **job_values(spec, job_id=job_id, built=built, weights=weights),
        note=note,
        command_comment="\n".join(f"#     {line}{end}" for line, end in zip(wrapped, ends)),
        target=spec.compiler.target,
        cpu_backend=spec.compiler.cpu_backend,
        compiler_args=base_args(spec),
        device_glob=DEVICE_GLOB,
    )
