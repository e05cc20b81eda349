"""The one Spike runtime of a process: configure() before first use, reset() to close it."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterable

from ._spike import Spike

_runtime: Spike | None = None
_lock = threading.Lock()


def _set_visible_cores(visible_cores: Iterable[int]) -> None:
    if isinstance(visible_cores, int):
        raise TypeError(f"visible_cores must be an iterable, not int. Use [{visible_cores}] or ({visible_cores},)")
    cores = list(visible_cores)
    for core in cores:
        if not isinstance(core, int):
            raise TypeError(f"visible_cores must contain integers, got {type(core)}: {core}")
        if core < 0:
            raise ValueError(f"Core ID must be non-negative, got {core}")
    if cores:
        os.environ["NEURON_RT_VISIBLE_CORES"] = ",".join(str(c) for c in cores)


def configure(visible_cores: Iterable[int] | None = None) -> None:
    with _lock:
        if _runtime is not None:
            raise RuntimeError(
                "Cannot configure: Spike runtime is already active. Call spike.reset() first to close "
                "the runtime, then configure()."
            )
    if visible_cores is not None:
        _set_visible_cores(visible_cores)


def reset() -> None:
    global _runtime
    with _lock:
        if _runtime is not None:
            warnings.warn(
                "spike.reset() called. All existing SpikeTensor and SpikeModel objects are now invalid and "
                "should not be used.",
                UserWarning,
                stacklevel=2,
            )
            _runtime.close()
            _runtime = None


def get_spike_singleton() -> Spike:
    global _runtime
    if _runtime is not None:
        return _runtime
    with _lock:
        if _runtime is None:
            _runtime = Spike()
        return _runtime
