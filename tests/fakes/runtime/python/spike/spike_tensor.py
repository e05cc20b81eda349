"""SpikeTensor: a device tensor with its numpy shape and dtype (spike/src/spike/spike_tensor.py)."""

from __future__ import annotations

import numpy as np

from ._spike import NrtTensor
from .spike_singleton import get_spike_singleton


class SpikeTensor:
    def __init__(self, tensor_ref: NrtTensor, shape: tuple[int, ...] | int, dtype: np.dtype, name: str | None = None):
        self.tensor_ref = tensor_ref
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.dtype = dtype
        self.name = name

    @classmethod
    def from_numpy(cls, array: np.ndarray, name: str | None = None, core_id: int = 0) -> SpikeTensor:
        array = np.ascontiguousarray(array)
        spike = get_spike_singleton()
        ref = spike.allocate_tensor(size=array.nbytes, core_id=core_id, name=name)
        spike.tensor_write_from_pybuffer(ref, array.tobytes())
        return cls(tensor_ref=ref, shape=array.shape, dtype=array.dtype, name=name)

    def numpy(self) -> np.ndarray:
        array = np.empty(self.shape, dtype=self.dtype)
        get_spike_singleton().tensor_read_to_pybuffer(self.tensor_ref, array.reshape(-1).view(np.uint8))
        return array

    def write_from_numpy(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        expected = int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize
        if array.nbytes != expected:
            raise ValueError(f"Size mismatch: source {array.nbytes} bytes, target {expected} bytes")
        get_spike_singleton().tensor_write_from_pybuffer(self.tensor_ref, array.tobytes())

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(shape={self.shape}, dtype={self.dtype}, name={self.name})"
