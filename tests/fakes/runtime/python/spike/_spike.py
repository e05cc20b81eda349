"""Fake of spike's nanobind module (``spike/_spike.pyi``): errors, the runtime and its trace session."""

from __future__ import annotations

import os

import fake_libnrt as _nrt

if _nrt.import_error_requested():
    raise ImportError(_nrt.IMPORT_ERROR)

TensorMetadata = _nrt.TensorMetadata
ModelTensorInfo = _nrt.ModelTensorInfo
NrtModel = _nrt.LoadedModel
NrtTensor = _nrt.DeviceTensor


class SpikeRuntimeError(RuntimeError):
    pass


class SpikeError(SpikeRuntimeError):
    """Errors of the spike layer; the message starts ``Spike Error: `` (spike/src/include/error.h)."""

    def __init__(self, message: str):
        super().__init__(f"Spike Error: {message}")


class NrtError(SpikeRuntimeError):
    """A non-success libnrt status: ``NRT Error <NAME>(<code>): <text>``."""


_alive = False


class Spike(_nrt.Runtime):
    """The runtime (nrt_init on construction, as the C++ RAII class does)."""

    def __init__(self, verbose_level: int = 0):
        global _alive
        if _alive:
            raise SpikeError(
                "Cannot create Spike instance: a previous instance still exists. Call close() on the "
                "existing instance or delete spike with all tensors/models first."
            )
        self.verbose_level = verbose_level
        super().__init__(NrtError)
        _alive = True

    def close(self) -> int:
        global _alive
        _alive = False
        return super().close()

    def load_model(
        self, neff_file: str, core_id: int = 0, cc_enabled: bool = False, rank_id: int = 0, world_size: int = 1
    ) -> NrtModel:
        if not os.path.isfile(neff_file) or not os.access(neff_file, os.R_OK):
            raise SpikeError(
                f"Failed to open NEFF file: {neff_file}. Please check if the file exists and have read permission."
            )
        return self.load(neff_file, core_id, cc_enabled, rank_id, world_size)

    def tensor_read_to_pybuffer(self, tensor: NrtTensor, buffer: object, offset: int = 0, size: int = 0) -> None:
        if not tensor.alive():
            raise SpikeError(f"Tensor '{tensor.name}' is freed. Please check the lifetime of the tensor.")
        super().tensor_read_to_pybuffer(tensor, buffer, offset, size)

    def execute(
        self, model: NrtModel, inputs: dict, outputs: dict, ntff_name: str | None = None, save_trace: bool = False
    ) -> None:
        if not model.alive():
            raise SpikeError("Unable to execute an unloaded model. Please check the lifetime of the model.")
        for refs in (inputs, outputs):
            for name, tensor in refs.items():
                if not tensor.alive():
                    raise SpikeError(
                        f"Tensor '{name}' is freed. Unable to add it into the tensor set. Please check "
                        "the lifetime of the tensor."
                    )
        super().execute(model, inputs, outputs, ntff_name=ntff_name, save_trace=save_trace)


class SystemTraceSession:
    """Traces one core (or all visible ones); ``fetch_events_json`` returns ``nc_exec_running`` events."""

    def __init__(self, core_id: int | None = None):
        from .spike_singleton import get_spike_singleton  # noqa: PLC0415

        self._session = get_spike_singleton().trace(core_id)

    def stop(self) -> None:
        self._session.stop()

    def fetch_events_json(self) -> str:
        return self._session.fetch_events_json()

    def drain_events(self) -> None:
        self._session.drain()

    def __enter__(self) -> SystemTraceSession:
        return self

    def __exit__(self, *args: object) -> None:
        self.stop()
