"""The neuronx-cc command a job asks for: the spec's options plus a log file and a verbosity that shows passes."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from neffbench.schema import compiler_args

LOGFILE_NAME = "log-neuron-cc.txt"
# At the default (warning) the compiler's stdout shows only progress dots; info shows each pass.
VERBOSITY = ("--verbose", "info")
# What torch_neuronx.trace runs before appending compiler_args (neuron-facts.md).
TRACE_DEFAULTS = ("--framework", "XLA", "--target", "trn1")


def base_args(spec: Any) -> list[str]:
    """The verbosity, then the spec's options: a ``--verbose`` in extra args still wins (the right-most does)."""
    return [*VERBOSITY, *compiler_args(spec)]


def job_compiler_args(spec: Any, compiler_dir: str | Path) -> list[str]:
    """``compiler_args`` for torch_neuronx.trace; ``--logfile`` last because validation reserves it."""
    return [*base_args(spec), "--logfile", str(Path(compiler_dir) / LOGFILE_NAME)]


def equivalent_command(compiler_dir: str | Path, args: list[str]) -> list[str]:
    """The neuronx-cc argv torch_neuronx.trace builds around ``args``."""
    d = Path(compiler_dir)
    return ["neuronx-cc", "compile", str(d / "model"), *TRACE_DEFAULTS, "--output", str(d / "graph.neff"), *args]


def shell_line(argv: list[str]) -> str:
    return shlex.join(argv)
