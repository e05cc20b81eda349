"""The neuronx-cc arguments a spec asks for, in the order the compiler reads them (right-most wins)."""

from __future__ import annotations

from typing import Any


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
