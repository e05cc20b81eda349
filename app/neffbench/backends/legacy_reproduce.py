"""reproduce.py for the torch_neuronx.trace backends (neuron, and cpu-check's script that makes the NEFF it did
not): the kernel's source, the module's weights digest and the trace with the job's compiler arguments."""

from __future__ import annotations

from typing import Any

import neffbench
from neffbench.backends.compiler_command import base_args, equivalent_command, job_compiler_args, shell_line
from neffbench.backends.weights_source import script_source
from neffbench.kernels import registry
from neffbench.kernels.api import Built, bucket_label
from neffbench.spec import spec_hash
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


def render(
    spec: Any, *, job_id: str, built: Built | None = None, weights: dict[str, Any] | None = None, note: str = ""
) -> str:
    """The script's text for a single-bucket spec (``built``: what the job traced; the module kernel's wrapper
    needs it); ``note``: comment lines that follow the docstring."""
    kernel = registry.for_spec(spec)
    args = job_compiler_args(spec, f"{_OUT}/compiler")
    wrapped = _wrap_command(equivalent_command(f"{_OUT}/compiler", args))
    ends = [" \\"] * (len(wrapped) - 1) + [""]
    needs = kernel.reproduce_needs(spec)
    return _TEMPLATE.format(
        job_id=job_id,
        name=spec.name,
        bucket=bucket_label(kernel.buckets(spec)[0]),
        hash8=spec_hash(spec)[:8],
        needs=needs,
        note=note,
        command_comment="\n".join(f"#     {line}{end}" for line, end in zip(wrapped, ends)),
        target=spec.compiler.target,
        cpu_backend=spec.compiler.cpu_backend,
        device_glob=DEVICE_GLOB,
        title=kernel.title,
        version=neffbench.__version__,
        kernel_source=kernel.reproduce_source(spec, built).strip(),
        module_source=script_source(weights).strip(),
        compiler_args=base_args(spec),
    )


# The script, as str.format fills it in: doubled braces are the script's own.
_TEMPLATE = '''#!/usr/bin/env python3
"""Rebuild the NEFF of neffbench job {job_id}: {name}, {bucket}, spec hash {hash8}.

Standalone: needs torch and torch-neuronx with neuronx-cc (from AWS's package index), not neffbench.{needs}

    python reproduce.py [OUTPUT_DIR] [--anyway]    # default: reproduce-out/ beside this file

It first checks that it built the module the job compiled (the digest of its weights and buffers) and
stops, saying so, when it did not; --anyway builds the NEFF all the same.

Writes OUTPUT_DIR/model.pt (the traced module holding the NEFF), OUTPUT_DIR/compiler/ (HLO, log and
NEFF), and the example inputs and eager outputs as .pt files.
"""
{note}
# torch_neuronx.trace lowers the module to HLO in OUTPUT_DIR/compiler/model and then runs the
# equivalent of:
#
{command_comment}

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

ANYWAY = "--anyway" in sys.argv
sys.argv = [arg for arg in sys.argv if arg != "--anyway"]

TARGET = {target!r}
# "auto": trace with cpu_backend=True when this host has no Neuron device.
CPU_BACKEND_SETTING = {cpu_backend!r}
CPU_BACKEND = CPU_BACKEND_SETTING == "on" or (CPU_BACKEND_SETTING == "auto" and not glob.glob({device_glob!r}))
if CPU_BACKEND:
    # Must be set before torch_neuronx is imported, for hosts where platform detection fails.
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = TARGET

import torch
import torch_neuronx

# ---- the {title} kernel and this job's values, exactly as neffbench {version} built them ----

{kernel_source}


# ---- the module the job compiled ----

{module_source}


# ---- the compile ----

COMPILER_ARGS = {compiler_args!r}  # --logfile is added below


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "reproduce-out"
    compiler_dir = out / "compiler"
    compiler_dir.mkdir(parents=True, exist_ok=True)
    module = build_module()
    if not same_weights(module):
        return 3
    inputs = example_inputs()
    state = getattr(module, "STATE", ())
    if state:  # the module's state (a KV cache), lifted out of it: given after the inputs, returned after the outputs
        inputs = tuple(inputs) + module.initial_state()
    with torch.no_grad():  # on copies: a forward writing into its inputs or its state must leave these as they were
        reference = module(*(t.clone() for t in inputs))
    torch.save(inputs, out / "example_inputs.pt")
    torch.save(reference, out / "reference_outputs.pt")
    args = COMPILER_ARGS + ["--logfile", str(compiler_dir / "log-neuron-cc.txt")]
    aliases = {{}}
    if state:  # kept on the device as the job did: parameters aliased to the outputs that update them
        module = module.kept(parameters=True)
        inputs, aliases = inputs[: len(inputs) - len(state)], module.aliases()
    traced = torch_neuronx.trace(module, inputs, compiler_workdir=str(compiler_dir), compiler_args=args,
                                 cpu_backend=CPU_BACKEND, input_output_aliases=aliases)
    torch.jit.save(traced, out / "model.pt")
    neffs = sorted(compiler_dir.glob("**/*.neff"))
    for neff in neffs:
        print(f"NEFF {{neff}} ({{neff.stat().st_size}} bytes)")
    if not neffs:
        print(f"no NEFF found under {{compiler_dir}}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''
