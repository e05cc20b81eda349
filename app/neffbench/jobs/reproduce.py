"""``reproduce.py``: a standalone script (torch and torch_neuronx only) that rebuilds a job's NEFF with the same values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neffbench
from neffbench.procs import write_text as write_text_atomic
from neffbench.jobs.compiler_command import base_args, equivalent_command, job_compiler_args, shell_line
from neffbench.kernels import registry
from neffbench.kernels.api import Built, bucket_label
from neffbench.jobs.weights_source import script_source
from neffbench.spec import spec_hash

SCRIPT_NAME = "reproduce.py"
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


def render(spec: Any, *, job_id: str, backend: str | None, built: Built | None = None,
           rope_scaling: Any = None, weights: dict[str, Any] | None = None) -> str:
    """The script's text for a single-bucket spec.

    ``built`` is what the job traced (the module kernel's wrapper needs it); ``rope_scaling`` is
    ignored (the RoPE kernel derives it) and kept for callers written before kernels existed. A
    torchneuron job gets its own script (jobs/reproduce_torchneuron.py).
    """
    if backend == "torchneuron":
        from neffbench.jobs import reproduce_torchneuron

        return reproduce_torchneuron.render(spec, job_id=job_id, built=built, weights=weights)
    kernel = registry.for_spec(spec)
    c = spec.compiler
    bucket = kernel.buckets(spec)[0]
    args = job_compiler_args(spec, f"{_OUT}/compiler")
    wrapped = _wrap_command(equivalent_command(f"{_OUT}/compiler", args))
    ends = [" \\"] * (len(wrapped) - 1) + [""]
    command_comment = "\n".join(f"#     {line}{end}" for line, end in zip(wrapped, ends))
    note = ""
    if backend == "cpu-check":
        note = ("# The job that wrote this script used the cpu-check backend: it made no NEFF. This script\n"
                "# makes one, on a host with the Neuron toolchain.\n")
    needs = getattr(kernel, "reproduce_needs", lambda s: "")(spec)
    return f'''#!/usr/bin/env python3
"""Rebuild the NEFF of neffbench job {job_id}: {spec.name}, {bucket_label(bucket)}, spec hash {spec_hash(spec)[:8]}.

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

TARGET = {c.target!r}
# "auto": trace with cpu_backend=True when this host has no Neuron device.
CPU_BACKEND_SETTING = {c.cpu_backend!r}
CPU_BACKEND = CPU_BACKEND_SETTING == "on" or (CPU_BACKEND_SETTING == "auto" and not glob.glob("/dev/neuron*"))
if CPU_BACKEND:
    # Must be set before torch_neuronx is imported, for hosts where platform detection fails.
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = TARGET

import torch
import torch_neuronx

# ---- the {kernel.title} kernel and this job's values, exactly as neffbench {neffbench.__version__} built them ----

{kernel.reproduce_source(spec, built).strip()}


# ---- the module the job compiled ----

{script_source(weights).strip()}


# ---- the compile ----

COMPILER_ARGS = {base_args(spec)!r}  # --logfile is added below


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "reproduce-out"
    compiler_dir = out / "compiler"
    compiler_dir.mkdir(parents=True, exist_ok=True)
    module = build_module()
    if not same_weights(module):
        return 3
    inputs = example_inputs()
    with torch.no_grad():
        reference = module(*inputs)
    torch.save(inputs, out / "example_inputs.pt")
    torch.save(reference, out / "reference_outputs.pt")
    args = COMPILER_ARGS + ["--logfile", str(compiler_dir / "log-neuron-cc.txt")]
    traced = torch_neuronx.trace(module, inputs, compiler_workdir=str(compiler_dir), compiler_args=args,
                                 cpu_backend=CPU_BACKEND)
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


def write(job_dir: Path, spec: Any, *, backend: str | None, built: Built | None = None,
          weights: dict[str, Any] | None = None) -> Path:
    path = Path(job_dir) / SCRIPT_NAME
    text = render(spec, job_id=Path(job_dir).name, backend=backend, built=built, weights=weights)
    write_text_atomic(path, text)
    path.chmod(0o755)
    return path
