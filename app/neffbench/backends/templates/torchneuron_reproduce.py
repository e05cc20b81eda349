#!/usr/bin/env python3
"""Rebuild the NEFF of neffbench job ${job_id}: ${name}, ${bucket}, spec hash ${hash8}.

With TorchNeuron, torch.compile(backend="neuron"). Standalone: needs torch and torch-neuronx 2.13.3 or later
(Neuron SDK 2.33+) with neuronx-cc, on a Trn2 or Trn3 instance; not neffbench.${needs}

    python reproduce.py [OUTPUT_DIR] [--anyway]    # default: reproduce-out/ beside this file

It first checks that it built the module the job compiled (the digest of its weights and buffers) and
stops, saying so, when it did not; --anyway builds the NEFF all the same.

Writes OUTPUT_DIR/neff_cache/ (the NEFF, under a hashed name in nested folders), OUTPUT_DIR/debug/ (the FX
graph and the StableHLO), OUTPUT_DIR/torchneuron.log, OUTPUT_DIR/compiler/${logfile}, and the example
inputs and eager outputs as .pt files.
"""
# TorchNeuron runs neuronx-cc in a temporary directory of its own, with the target and LNC of this
# instance (${lnc_env}), the flags it always adds, then NEURON_CC_FLAGS:
#
#     ${command}

from __future__ import annotations

import os
import sys
from pathlib import Path

ANYWAY = "--anyway" in sys.argv
sys.argv = [arg for arg in sys.argv if arg != "--anyway"]
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "reproduce-out"
CC_FLAGS = "${cc_flags}"
# The variables the job set, pointing into OUT. Set before torch is imported: torch loads TorchNeuron with
# itself, and TorchNeuron may read where its caches and log go only once.
os.environ.update({
#: ${env_source}
})
(OUT / "compiler").mkdir(parents=True, exist_ok=True)
MODEL_NAME = "${name}"
# "neuron"; neffbench's own tests run this script on the CPU against a fake TorchNeuron.
DEVICE = os.environ.get("${device_env}") or "${device}"

import torch

#: ${kernel_and_module}


# ---- the compile ----


def main() -> int:
    module = build_module()
    if not same_weights(module):
        return 3
    inputs = example_inputs()
    state = getattr(module, "STATE", ())
    if state:  # the module's state (a KV cache), lifted out of it: given after the inputs, returned after the outputs
        inputs = tuple(inputs) + module.initial_state()
    with torch.no_grad():  # on copies: a forward writing into its inputs or its state must leave these as they were
        reference = module(*(t.clone() for t in inputs))
    torch.save(inputs, OUT / "example_inputs.pt")
    torch.save(reference, OUT / "reference_outputs.pt")
    if state:  # kept in the compiled module's buffers, written in place, as the job did
        module, inputs = module.kept(parameters=False), inputs[: len(inputs) - len(state)]
    compiled = torch.compile(module.to(DEVICE), backend="neuron", fullgraph=True, dynamic=False,
                             options={"model_name": MODEL_NAME})
    with torch.no_grad():
        compiled(*(t.to(DEVICE) for t in inputs))  # the first call compiles
    getattr(torch, DEVICE).synchronize()
    neffs = sorted((OUT / "neff_cache").glob("**/*.neff"))
    for neff in neffs:
        print(f"NEFF {neff} ({neff.stat().st_size} bytes)")
    if not neffs:
        print(f"no NEFF found under {OUT / 'neff_cache'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
