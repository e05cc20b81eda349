"""The eager call every check makes once: the reference outputs, the complex operations it ran, and what it did
besides returning (torch; the worker and the probe only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from neffbench.backends import complex_ops
from neffbench.backends.verify import as_tuple
from neffbench.usercode.effects import Effects, watching


@dataclass
class EagerCall:
    outputs: tuple[Any, ...]
    complex_found: list[complex_ops.Finding]
    effects: Effects


def copies(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The inputs as a call may take them: copies, so that a forward writing into its inputs (or into the state
    it is given) leaves the job's own inputs as they were before any call, for the trace, the saved arrays and
    every later check."""
    return tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in inputs)


def call(built: Any) -> EagerCall:
    """``built.module`` called once on copies of its inputs, watched."""
    given = copies(built.inputs)
    with watching(built.module, dict(zip(built.input_names, given)), built.path_prefix) as effects:
        out, found = complex_ops.watch_call(built.module, given)
    return EagerCall(as_tuple(out), found, effects)
