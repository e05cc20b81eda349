"""The compile pipeline: job records, the worker protocol, the compile job that drives the worker, buckets, and the
memory estimate and verdict every compile (and sweep) is gated by.

Imports no Qt and no torch (torch is imported by the worker only), so the CLI and the GUI can use it
freely. Names are loaded on first use so that the worker, which needs only a few submodules, starts fast.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_EXPORTS = {
    "FINAL_OUTCOMES": "records",
    "NO_NEFF_NOTE": "records",
    "OUTCOMES": "records",
    "SCHEMA_VERSION": "records",
    "mark_interrupted": "records",
    "read_record": "records",
    "CompileJob": "compile_job",
    "JobResult": "compile_job",
    "run_buckets": "buckets",
    "run_outcome": "buckets",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'neffbench.jobs' has no attribute {name!r}")
    return getattr(importlib.import_module(f"neffbench.jobs.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)


class _Jobs(types.ModuleType):
    """This package is also ``neffbench.jobs(workdir)`` of the Python API (the package's name is the API's verb, and
    once imported the package would hide the function): calling it lists the workdir's jobs."""

    def __call__(self, workdir: Any = "neffbench-workdir") -> Any:
        return importlib.import_module("neffbench.api.job").jobs(workdir)


sys.modules[__name__].__class__ = _Jobs
