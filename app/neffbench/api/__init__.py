"""The workbench from Python (scripts and notebooks): ``trace``, ``compile``, ``jobs``, ``sweep`` and the records
they return. It imports no Qt, and torch only where a call needs it; the names load on first use."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "trace": "tracing",
    "compile": "compiling",
    "jobs": "job",
    "neffs": "compiling",
    "sweep": "sweeping",
    "Job": "job",
    "JobList": "job",
    "Run": "run",
    "Compare": "compare",
    "Explanation": "explanation",
    "Structure": "structure",
    "Sweep": "sweeping",
    "CompileFailed": "errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'neffbench.api' has no attribute {name!r}")
    return getattr(importlib.import_module(f"neffbench.api.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
