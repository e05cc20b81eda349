"""Fake TorchNeuron (torch-neuronx 2.13.3+, the native flavour) for tests; never imported by the product.

What shared/docs/neuron-facts.md ("TorchNeuron") and TorchNeuron's public sources say the real one does,
minus the device: no ``trace``; a dynamo backend named ``"neuron"`` registered through the
``torch_dynamo_backends`` entry point (the ``.dist-info`` beside this package; ``torch.backends`` autoloads
``_autoload`` as the real wheel's does), which runs ``neuronx-cc`` from PATH in a temporary directory with
its output captured, stores the NEFF in the hashed cache ``$TORCH_NEURONX_NEFF_CACHE_DIR/ab/cd/<hex>.neff``,
keeps the FX graph, the StableHLO and a copy of the NEFF under ``$TORCH_NEURONX_DEBUG_DIR`` when
``TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS=1``, logs ``[Neuron] [LEVEL] [file:line] message`` lines, and
raises the real messages. It runs the graph on the CPU: there is no fake ``"neuron"`` device (a PrivateUse1
device needs a C++ allocator), so tests set ``NEFFBENCH_TORCHNEURON_DEVICE=cpu``.

``FAKE_TORCHNEURON_SCENARIO``: ``success`` (default) or ``no-device`` (``device_count()`` is 0 and compiling
raises "No Neuron devices available"). Compiler failures come from the fake neuronx-cc
(``FAKE_NEURONX_CC_SCENARIO``); graph breaks from dynamo itself, as for real.
"""

from __future__ import annotations

import os
import sys

__version__ = "2.13.3.0+fake"
SCENARIO_ENV = "FAKE_TORCHNEURON_SCENARIO"
_LEVELS = {"ERROR": 0, "WARNING": 1, "INFO": 2, "DEBUG": 3}

# The real NeuronLogger reads its variables once, when it is first used; the fake when it is imported, so a
# job that sets them after importing torch_neuronx gets its log somewhere else, as it would for real.
_LOG_FILE = os.environ.get("TORCH_NEURONX_LOG_FILE")
_LOG_LEVEL = int(os.environ.get("TORCH_NEURONX_LOG_LEVEL") or 1)
autoloaded = False


def device_count() -> int:
    return 0 if os.environ.get(SCENARIO_ENV) == "no-device" else 1


def _autoload() -> None:
    """What torch's device-backend autoload calls (the real one registers the "neuron" device here)."""
    global autoloaded
    autoloaded = True


def log(level: str, message: str, where: str = "torch_neuronx/csrc/core/KernelExecution.cpp:118") -> None:
    """One NeuronLogger line: to TORCH_NEURONX_LOG_FILE when set, else warnings to stderr and the rest to stdout."""
    if _LEVELS[level] > _LOG_LEVEL:
        return
    line = f"[Neuron] [{level}] [{where}] {message}"
    if _LOG_FILE:
        with open(_LOG_FILE, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    else:
        print(line, file=sys.stderr if _LEVELS[level] <= 1 else sys.stdout, flush=True)
