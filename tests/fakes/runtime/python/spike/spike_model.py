"""SpikeModel and BenchmarkResult (spike/src/spike/spike_model.py): spike checks names, shapes and dtypes itself.

Unknown input or output names raise ValueError naming the expected ones; a shape, dtype or core mismatch
fails an ``assert`` (AssertionError), as in the real module. A missing input is not checked by spike:
libnrt rejects it (``NRT Error NRT_INVALID(2): Failed to execute model``).

bfloat16 and fp8 need ``ml_dtypes``, which the real spike imports unconditionally. When it is not
installed, this fake stands in uint16 for bfloat16 (auto-allocated outputs are uint16 arrays of the bits,
and uint16 inputs pass the bfloat16 check); with ml_dtypes it is as strict as the real one.
"""

from __future__ import annotations

from pathlib import Path

import fake_libnrt as _nrt
import numpy as np

from ._spike import NrtModel
from .spike_singleton import get_spike_singleton
from .spike_tensor import SpikeTensor

BenchmarkResult = _nrt.BenchmarkResult


def _dtype_for(reported: str) -> np.dtype:
    ml = _nrt.ml_dtypes_module()
    if reported == "bfloat16":
        return np.dtype(ml.bfloat16) if ml else np.dtype(np.uint16)
    return np.dtype(reported)  # "unknown" raises TypeError here, as np.dtype does in the real spike


class SpikeModel:
    """A wrapper class for executing compiled kernels from NEFF files."""

    def __init__(self, model_ref: NrtModel, name: str, neff_path: Path):
        self.model_ref = model_ref
        self.name = name
        self.neff_path = Path(neff_path)
        info = get_spike_singleton().get_tensor_info(self.model_ref)
        self.input_tensors_info = info.inputs
        self.output_tensors_info = info.outputs

    @classmethod
    def load_from_neff(
        cls,
        neff_path: Path | str,
        name: str | None = None,
        core_id: int = 0,
        cc_enabled: bool = False,
        rank_id: int = 0,
        world_size: int = 1,
    ) -> SpikeModel:
        neff_path = Path(neff_path)
        if name is None:
            name = neff_path.stem
        ref = get_spike_singleton().load_model(str(neff_path), core_id, cc_enabled, rank_id, world_size)
        return cls(ref, name, neff_path)

    def allocate_output_tensors(self) -> list[SpikeTensor]:
        core_id = self.model_ref.core_id
        out = []
        for name, info in self.output_tensors_info.items():
            tensor = np.zeros(info.shape, dtype=_dtype_for(info.dtype))
            assert tensor.nbytes == info.size, f"Size mismatch: tensor.nbytes={tensor.nbytes}, expected={info.size}"
            out.append(SpikeTensor.from_numpy(tensor, name, core_id=core_id))
        return out

    @staticmethod
    def _check_dtype_compatibility(actual_dtype, expected_dtype: str, tensor_name: str, is_input: bool) -> None:
        kind = "Input" if is_input else "Output"
        ml = _nrt.ml_dtypes_module()
        actual = np.dtype(actual_dtype)
        if ml is not None and actual in (np.dtype(ml.float8_e4m3), np.dtype(ml.float8_e5m2)):
            assert expected_dtype == "int8", (
                f"{kind} {tensor_name}: expected dtype int8 for fp8 types, got {expected_dtype}"
            )
            return
        if ml is None and expected_dtype == "bfloat16" and actual == np.dtype(np.uint16):
            return  # the fake's stand-in for bfloat16 without ml_dtypes
        assert actual.name == expected_dtype, f"{kind} {tensor_name}: expected dtype {expected_dtype}, got {actual}"

    def _validate_io(self, inputs: dict[str, SpikeTensor], outputs: dict[str, SpikeTensor]) -> None:
        model_core_id = self.model_ref.core_id
        unknown_inputs = set(inputs) - set(self.input_tensors_info)
        if unknown_inputs:
            raise ValueError(
                f"Unknown input(s) {unknown_inputs} for model '{self.name}'. "
                f"Expected inputs: {list(self.input_tensors_info.keys())}"
            )
        unknown_outputs = set(outputs) - set(self.output_tensors_info)
        if unknown_outputs:
            raise ValueError(
                f"Unknown output(s) {unknown_outputs} for model '{self.name}'. "
                f"Expected outputs: {list(self.output_tensors_info.keys())}"
            )
        for kind, given, infos in (
            ("Input", inputs, self.input_tensors_info),
            ("Output", outputs, self.output_tensors_info),
        ):
            for k, v in given.items():
                core = v.tensor_ref.core_id
                assert core == model_core_id, (
                    f"{kind} {k}: expected model and tensor on the same core, got model "
                    f"core_id {model_core_id} and tensor core_id {core}"
                )
                assert v.shape == tuple(infos[k].shape), f"{kind} {k}: expected shape {infos[k].shape}, got {v.shape}"
                self._check_dtype_compatibility(v.dtype, infos[k].dtype, k, is_input=kind == "Input")

    def __call__(
        self,
        inputs: dict[str, SpikeTensor],
        outputs: dict[str, SpikeTensor] | None = None,
        save_trace: bool = False,
        ntff_name: str | None = None,
    ) -> dict[str, SpikeTensor] | None:
        auto = outputs is None
        if auto:
            outputs = {t.name: t for t in self.allocate_output_tensors()}
        self._validate_io(inputs, outputs)
        if ntff_name is None:
            ntff_name = str(self.neff_path.with_suffix("")) + ".ntff"
        get_spike_singleton().execute(
            self.model_ref,
            inputs={k: v.tensor_ref for k, v in inputs.items()},
            outputs={k: v.tensor_ref for k, v in outputs.items()},
            save_trace=save_trace,
            ntff_name=ntff_name,
        )
        return outputs if auto else None

    def benchmark(
        self,
        inputs: dict[str, SpikeTensor],
        outputs: dict[str, SpikeTensor] | None = None,
        warmup_iter: int = 5,
        benchmark_iter: int = 5,
        mode: str = "device",
    ) -> BenchmarkResult:
        if mode not in ("device", "host"):
            raise ValueError(f"Invalid benchmark mode '{mode}'. Use 'device' or 'host'.")
        if outputs is None:
            outputs = {t.name: t for t in self.allocate_output_tensors()}
        self._validate_io(inputs, outputs)
        return _nrt.run_benchmark(
            get_spike_singleton(),
            self.model_ref,
            {k: v.tensor_ref for k, v in inputs.items()},
            {k: v.tensor_ref for k, v in outputs.items()},
            warmup_iter,
            benchmark_iter,
            mode,
        )
