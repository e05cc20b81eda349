"""Fake ``nrtpy`` (Neuron SDK 2.32+): the documented API, without a NeuronCore.

Follows aws-neuron-sdk ``neuron-runtime/nrtpy/{index,model,tensor,configuration,errors,
nrtpy-troubleshooting,tutorial-debug-neff-nrtpy}.rst``; where those pages are silent, the nkipy ``spike``
package nrtpy grew from (same C++ layer: "NRT Error <NAME>(<code>): Failed to load model").

- ``configure(visible_cores=None)`` sets ``NEURON_RT_VISIBLE_CORES`` only (TypeError for an int or non-int
  items, ValueError for a negative id, NrtpyError, a RuntimeError, once the runtime is active);
  ``reset()`` closes the runtime: older models and tensors then raise NrtpyError.
- ``NrtpyModel.load_from_neff(neff_path, name=None, core_id=0, cc_enabled=False, rank_id=0, world_size=1)``:
  a missing file raises ``NRT Error NRT_FAILURE(1): Failed to load model`` (errors.rst), a file that is no
  NEFF ``NRT_INVALID(2)``. ``input_tensors_info`` / ``output_tensors_info`` are ``{name: TensorMetadata(size,
  dtype, shape)}`` read from the NEFF itself; dtype is what libnrt reports (fp8 as int8, tensor.rst).
- ``model(inputs={name: NrtpyTensor}, outputs=None, save_trace=False, ntff_name=None)`` returns the
  auto-allocated outputs ``{name: NrtpyTensor}``, or None when ``outputs`` is given. nrtpy itself checks
  nothing: libnrt rejects an unknown, missing or wrongly sized tensor with
  ``NRT Error NRT_INVALID(2): Failed to execute model`` (nrt_status.rst: "input tensor name/size mismatch").
- ``model.benchmark(inputs, outputs=None, warmup_iter=5, benchmark_iter=5, mode="device")`` returns
  ``BenchmarkResult``; ValueError for another mode or ``benchmark_iter < 1``; RuntimeError in device mode
  when no device event was captured.
- ``NrtpyTensor.from_numpy(array, name=None, core_id=0)``, ``.numpy()``, ``.write_from_numpy(array)``
  (ValueError on a byte-size mismatch), ``.shape`` ``.dtype`` ``.name``.

bfloat16: numpy has none. libnrt only checks byte sizes, so an input may be given as any array of the
right size (a uint16 view of the bits, or ``ml_dtypes.bfloat16``). Auto-allocated bfloat16 outputs are
``ml_dtypes.bfloat16`` when ml_dtypes imports, else void ``|V2`` (reinterpret them, as the troubleshooting
page says for void outputs). ``FAKE_NRT_VOID=1`` makes every auto-allocated output void. The other
``FAKE_NRT_*`` controls are in ``fake_libnrt``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import fake_libnrt as _nrt
import numpy as np

if _nrt.import_error_requested():
    raise ImportError(_nrt.IMPORT_ERROR)

__version__ = "2.32.0+fake"

BenchmarkResult = _nrt.BenchmarkResult
TensorMetadata = _nrt.TensorMetadata
ModelTensorInfo = _nrt.ModelTensorInfo
NrtModel = _nrt.LoadedModel
NrtTensor = _nrt.DeviceTensor


class NrtpyError(RuntimeError):
    """An error of the nrtpy layer: a freed tensor, a model after reset(), configure() while active."""


class NrtError(RuntimeError):
    """A non-success libnrt status: ``NRT Error <NAME>(<code>): <text>``."""


_runtime: _nrt.Runtime | None = None
_lock = threading.Lock()


def get_nrtpy_singleton() -> _nrt.Runtime:
    """The process's one runtime, created on first use."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = _nrt.Runtime(NrtError)
        return _runtime


def configure(visible_cores: Iterable[int] | None = None) -> None:
    with _lock:
        if _runtime is not None:
            raise NrtpyError("Cannot configure: the nrtpy runtime is already active. Call nrtpy.reset() first.")
    if visible_cores is None:
        return
    if isinstance(visible_cores, int):
        raise TypeError(f"visible_cores must be an iterable, not int. Use [{visible_cores}] or ({visible_cores},)")
    cores = list(visible_cores)
    for core in cores:
        if not isinstance(core, int) or isinstance(core, bool):
            raise TypeError(f"visible_cores must contain integers, got {type(core)}: {core}")
        if core < 0:
            raise ValueError(f"Core ID must be non-negative, got {core}")
    if cores:
        os.environ["NEURON_RT_VISIBLE_CORES"] = ",".join(str(c) for c in cores)


def reset() -> None:
    global _runtime
    with _lock:
        if _runtime is not None:
            _runtime.close()
            _runtime = None


def _ref(tensor: Any, name: str) -> _nrt.DeviceTensor:
    ref = tensor.tensor_ref
    if not ref.alive():
        raise NrtpyError(f"Tensor '{name}' is freed or belongs to a closed runtime; it cannot be used.")
    return ref


class NrtpyTensor:
    """A tensor in device memory (here: host bytes) with its numpy shape and dtype."""

    def __init__(
        self, tensor_ref: _nrt.DeviceTensor, shape: tuple[int, ...] | int, dtype: np.dtype, name: str | None = None
    ):
        self.tensor_ref = tensor_ref
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.dtype = np.dtype(dtype)
        self.name = name

    @classmethod
    def from_numpy(cls, array: np.ndarray, name: str | None = None, core_id: int = 0) -> NrtpyTensor:
        array = np.ascontiguousarray(array)
        runtime = get_nrtpy_singleton()
        ref = runtime.allocate_tensor(array.nbytes, core_id=core_id, name=name)
        runtime.tensor_write_from_pybuffer(ref, array.tobytes())
        return cls(ref, array.shape, array.dtype, name)

    def numpy(self) -> np.ndarray:
        ref = _ref(self, self.name or "unnamed_tensor")
        return np.frombuffer(bytes(ref.data), dtype=self.dtype).reshape(self.shape).copy()

    def write_from_numpy(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        expected = int(np.prod(self.shape)) * self.dtype.itemsize
        if array.nbytes != expected:
            raise ValueError(f"Size mismatch: source {array.nbytes} bytes, target {expected} bytes")
        ref = _ref(self, self.name or "unnamed_tensor")
        get_nrtpy_singleton().tensor_write_from_pybuffer(ref, array.tobytes())

    def __repr__(self) -> str:
        return f"NrtpyTensor(shape={self.shape}, dtype={self.dtype}, name={self.name})"


class NrtpyModel:
    """A NEFF loaded on a NeuronCore."""

    def __init__(self, model_ref: _nrt.LoadedModel, name: str, neff_path: Path):
        self.model_ref = model_ref
        self.name = name
        self.neff_path = Path(neff_path)
        info = get_nrtpy_singleton().get_tensor_info(model_ref)
        self.input_tensors_info: dict[str, TensorMetadata] = info.inputs
        self.output_tensors_info: dict[str, TensorMetadata] = info.outputs

    @classmethod
    def load_from_neff(
        cls,
        neff_path: Path | str,
        name: str | None = None,
        core_id: int = 0,
        cc_enabled: bool = False,
        rank_id: int = 0,
        world_size: int = 1,
    ) -> NrtpyModel:
        neff_path = Path(neff_path)
        ref = get_nrtpy_singleton().load(
            str(neff_path), core_id, cc_enabled, rank_id, world_size, missing_status="NRT_FAILURE"
        )
        return cls(ref, neff_path.stem if name is None else name, neff_path)

    def _model(self) -> _nrt.LoadedModel:
        if not self.model_ref.alive():
            raise NrtpyError("Unable to execute an unloaded model. Please check the lifetime of the model.")
        return self.model_ref

    def allocate_output_tensors(self) -> list[NrtpyTensor]:
        core = self.model_ref.core_id
        out = []
        for t in self.model_ref.neff.outputs:
            dtype = _nrt.void_dtype(t) if _nrt.void_requested() else (_nrt.numpy_dtype(t) or _nrt.void_dtype(t))
            ref = get_nrtpy_singleton().allocate_tensor(t.size, core_id=core, name=t.name)
            out.append(NrtpyTensor(ref, t.shape, dtype, t.name))
        return out

    def _refs(self, inputs: dict[str, NrtpyTensor], outputs: dict[str, NrtpyTensor]):
        return ({k: _ref(v, k) for k, v in inputs.items()}, {k: _ref(v, k) for k, v in outputs.items()})

    def __call__(
        self,
        inputs: dict[str, NrtpyTensor],
        outputs: dict[str, NrtpyTensor] | None = None,
        save_trace: bool = False,
        ntff_name: str | None = None,
    ) -> dict[str, NrtpyTensor] | None:
        model = self._model()
        auto = outputs is None
        if auto:
            outputs = {t.name: t for t in self.allocate_output_tensors()}
        in_refs, out_refs = self._refs(inputs, outputs)
        if ntff_name is None:
            ntff_name = str(self.neff_path.with_suffix("")) + ".ntff"
        get_nrtpy_singleton().execute(model, in_refs, out_refs, ntff_name=ntff_name, save_trace=save_trace)
        return outputs if auto else None

    def benchmark(
        self,
        inputs: dict[str, NrtpyTensor],
        outputs: dict[str, NrtpyTensor] | None = None,
        warmup_iter: int = 5,
        benchmark_iter: int = 5,
        mode: str = "device",
    ) -> BenchmarkResult:
        if mode not in ("device", "host"):
            raise ValueError(f"Invalid benchmark mode '{mode}'. Use 'device' or 'host'.")
        if benchmark_iter < 1:
            raise ValueError(f"benchmark_iter must be at least 1, got {benchmark_iter}")
        model = self._model()
        if outputs is None:
            outputs = {t.name: t for t in self.allocate_output_tensors()}
        in_refs, out_refs = self._refs(inputs, outputs)
        return _nrt.run_benchmark(get_nrtpy_singleton(), model, in_refs, out_refs, warmup_iter, benchmark_iter, mode)

    def __repr__(self) -> str:
        return f"NrtpyModel(name={self.name!r}, neff_path={str(self.neff_path)!r}, core_id={self.model_ref.core_id})"


__all__ = [
    "BenchmarkResult",
    "ModelTensorInfo",
    "NrtError",
    "NrtModel",
    "NrtTensor",
    "NrtpyError",
    "NrtpyModel",
    "NrtpyTensor",
    "TensorMetadata",
    "configure",
    "get_nrtpy_singleton",
    "reset",
]
