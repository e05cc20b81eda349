#!/usr/bin/env python3
"""Rebuild the NEFF of neffbench job ${job_id}: ${name}, ${bucket}, spec hash ${hash8}.

Standalone: needs torch and torch-neuronx with neuronx-cc (from AWS's package index), not neffbench.${needs}

    python reproduce.py [OUTPUT_DIR] [--anyway]    # default: reproduce-out/ beside this file

It first checks that it built the module the job compiled (the digest of its weights and buffers) and
stops, saying so, when it did not; --anyway builds the NEFF all the same.

Writes OUTPUT_DIR/model.pt (the traced module holding the NEFF), OUTPUT_DIR/compiler/ (HLO, log and
NEFF), and the example inputs and eager outputs as .pt files.
"""
#: ${note}
# torch_neuronx.trace lowers the module to HLO in OUTPUT_DIR/compiler/model and then runs the
# equivalent of:
#
#: ${command_comment}

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

ANYWAY = "--anyway" in sys.argv
sys.argv = [arg for arg in sys.argv if arg != "--anyway"]

TARGET = "${target}"
# "auto": trace with cpu_backend=True when this host has no Neuron device.
CPU_BACKEND_SETTING = "${cpu_backend}"
CPU_BACKEND = CPU_BACKEND_SETTING == "on" or (CPU_BACKEND_SETTING == "auto" and not glob.glob("${device_glob}"))
if CPU_BACKEND:
    # Must be set before torch_neuronx is imported, for hosts where platform detection fails.
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = TARGET

import torch
import torch_neuronx

#: ${kernel_and_module}


# ---- the compile ----

COMPILER_ARGS = "${compiler_args}"  # --logfile is added below


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
    aliases = {}
    if state:  # kept on the device as the job did: parameters aliased to the outputs that update them
        module = module.kept(parameters=True)
        inputs, aliases = inputs[: len(inputs) - len(state)], module.aliases()
    traced = torch_neuronx.trace(module, inputs, compiler_workdir=str(compiler_dir), compiler_args=args,
                                 cpu_backend=CPU_BACKEND, input_output_aliases=aliases)
    torch.jit.save(traced, out / "model.pt")
    neffs = sorted(compiler_dir.glob("**/*.neff"))
    for neff in neffs:
        print(f"NEFF {neff} ({neff.stat().st_size} bytes)")
    if not neffs:
        print(f"no NEFF found under {compiler_dir}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
