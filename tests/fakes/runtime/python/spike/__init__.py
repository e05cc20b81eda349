"""Fake ``spike`` (aws-neuron/nkipy ``spike/src/spike``): the same modules, classes and signatures.

``SpikeModel.load_from_neff(neff_path, name=None, core_id=0, cc_enabled=False, rank_id=0, world_size=1)``,
``model(inputs, outputs=None, save_trace=False, ntff_name=None)`` (returns the outputs only when it
allocated them), ``model.benchmark(inputs, outputs=None, warmup_iter=5, benchmark_iter=5, mode="device")``
-> ``BenchmarkResult``; ``SpikeTensor.from_numpy(array, name=None, core_id=0)`` / ``.numpy()``;
``configure(visible_cores=None)``, ``reset()`` (UserWarning when a runtime was open). Errors:
``SpikeError`` ("Spike Error: ..."; a missing NEFF file), ``NrtError`` ("NRT Error NAME(code): ...");
both subclass ``SpikeRuntimeError(RuntimeError)``. See ``spike_model`` for what spike checks itself and
``fake_libnrt`` for the FAKE_NRT_* controls (FAKE_NRT_VOID does nothing here: spike maps dtypes itself).
"""

from ._spike import (
    ModelTensorInfo,
    NrtError,
    NrtModel,
    NrtTensor,
    SpikeError,
    SpikeRuntimeError,
    SystemTraceSession,
    TensorMetadata,
)
from .spike_model import BenchmarkResult, SpikeModel
from .spike_singleton import configure, get_spike_singleton, reset
from .spike_tensor import SpikeTensor

__version__ = "0.1.0+fake"

__all__ = [
    "BenchmarkResult",
    "ModelTensorInfo",
    "NrtError",
    "NrtModel",
    "NrtTensor",
    "SpikeError",
    "SpikeModel",
    "SpikeRuntimeError",
    "SpikeTensor",
    "SystemTraceSession",
    "TensorMetadata",
    "configure",
    "get_spike_singleton",
    "reset",
]
