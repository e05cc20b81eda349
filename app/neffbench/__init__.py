"""NEFF Workbench: compile PyTorch functions into AWS Neuron NEFF executables.

From Python: ``neffbench.trace`` takes ``torch_neuronx.trace``'s arguments (``import neffbench as torch_neuronx``
is the one line a script changes), and ``compile``, ``jobs``, ``sweep`` return the records the ``neffbench``
command prints (see :mod:`neffbench.api`). They load on first use, so ``import neffbench`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = (
    "trace",
    "compile",
    "jobs",
    "neffs",
    "sweep",
    "Job",
    "Run",
    "Compare",
    "Explanation",
    "Structure",
    "Sweep",
    "CompileFailed",
)


def __getattr__(name: str) -> Any:
    if name in _API:
        # By name, as the other packages load theirs: the API sits on top of everything, which imports this module.
        return getattr(importlib.import_module("neffbench.api"), name)
    raise AttributeError(f"module 'neffbench' has no attribute {name!r}")
