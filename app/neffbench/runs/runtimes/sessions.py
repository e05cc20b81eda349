"""A loaded target behind one small interface: call it once, time it; the two shapes the runtimes load into.

A NEFF loaded by a Neuron runtime (nrtpy and spike share ``Model.load_from_neff``, ``Tensor.from_numpy``,
``__call__`` and ``benchmark``) or a torch module (TorchScript or eager) called with the job's tensors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Timing:
    cold_ms: float
    durations_ms: list[float]
    mode: str
    reported: dict[str, Any] | None = None  # what the runtime's own benchmark returned


# progress(phase, done, total, counted): "warmup" or "timed", calls done of total; counted False when the
# runtime's own benchmark makes the calls and only their total is known.
Progress = Callable[[str, int, int, bool], None]


class Session:
    """A loaded target: ``call`` returns outputs by NEFF name; ``bench`` times warm-up plus iterations."""

    name = ""
    variant: str | None = None  # for the CPU: "TorchScript (model.pt)" or "eager module"
    secondary: Session | None = None  # timed after this one (the CPU's eager module beside its TorchScript)

    def call(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def bench(
        self, warmup: int, iterations: int, mode: str, stop: Callable[[], bool], progress: Progress | None = None
    ) -> Timing:
        raise NotImplementedError


def _no_progress(phase: str, done: int, total: int, counted: bool) -> None:
    return None


def _loop(
    fn: Callable[[], Any], warmup: int, iterations: int, stop: Callable[[], bool], progress: Progress | None = None
) -> list[float]:
    """Wall-clock durations of ``iterations`` calls after ``warmup``, as lean as a bare loop can be (the
    progress report and the stop check sit outside the timed call)."""
    report = progress or _no_progress
    for i in range(warmup):
        fn()
        report("warmup", i + 1, warmup, True)
        if stop():
            return []
    clock = time.perf_counter_ns
    out = []
    for i in range(iterations):
        t0 = clock()
        fn()
        out.append((clock() - t0) / 1e6)
        report("timed", i + 1, iterations, True)
        if stop():
            break
    return out


class NrtSession(Session):
    """A NEFF on a NeuronCore: ``model_cls.load_from_neff``, its tensors made once, timed by its own benchmark."""

    def __init__(
        self,
        name: str,
        model_cls: Any,
        tensor_cls: Any,
        neff: str,
        feeds: dict[str, np.ndarray],
        core: int,
        out_dtypes: dict[str, str],
    ):
        self.name = name
        self.model = model_cls.load_from_neff(neff, core_id=core)
        self.feeds = {k: tensor_cls.from_numpy(v, name=k, core_id=core) for k, v in feeds.items()}
        self.out_dtypes = out_dtypes
        self.info = getattr(self.model, "input_tensors_info", None)

    def call(self) -> dict[str, np.ndarray]:
        outs = self.model(inputs=self.feeds)
        return {
            k: reinterpret(t.numpy() if hasattr(t, "numpy") else np.asarray(t), self.out_dtypes.get(k))
            for k, t in outs.items()
        }

    def bench(
        self, warmup: int, iterations: int, mode: str, stop: Callable[[], bool], progress: Progress | None = None
    ) -> Timing:
        t0 = time.perf_counter_ns()
        self.model(inputs=self.feeds)
        cold = (time.perf_counter_ns() - t0) / 1e6
        (progress or _no_progress)("timed", 0, iterations, False)  # the runtime counts its calls itself
        r = self.model.benchmark(self.feeds, warmup_iter=warmup, benchmark_iter=iterations, mode=mode)
        reported = {
            k: getattr(r, k, None)
            for k in ("mean_ms", "min_ms", "max_ms", "std_dev_ms", "iterations", "warmup_iterations")
        }
        return Timing(cold, [float(d) for d in r.durations_ms], mode, reported)


class TorchSession(Session):
    """A torch module (TorchScript or eager) called with the job's tensors in call order."""

    def __init__(self, name: str, module: Any, args: tuple[Any, ...], out_names: list[str]):
        self.name = name
        self.module = module
        self.args = args
        self.out_names = out_names

    def _run(self) -> Any:
        import torch

        # Copies: a module writing into its inputs (or into the state it is given) must leave the run's own as
        # they were, for every later call to start from.
        with torch.no_grad():
            return self.module(*(a.clone() if isinstance(a, torch.Tensor) else a for a in self.args))

    def call(self) -> dict[str, np.ndarray]:
        import torch

        from neffbench.runs.arrays import from_tensor

        out = self._run()
        outs = (out,) if isinstance(out, torch.Tensor) else tuple(out)
        return {
            self.out_names[i] if i < len(self.out_names) else f"output{i}": from_tensor(t)[0]
            for i, t in enumerate(outs)
        }

    def bench(
        self, warmup: int, iterations: int, mode: str, stop: Callable[[], bool], progress: Progress | None = None
    ) -> Timing:
        import torch

        t0 = time.perf_counter_ns()
        self._run()
        cold = (time.perf_counter_ns() - t0) / 1e6
        module, args = self.module, self.args
        with torch.no_grad():
            durations = _loop(lambda: module(*args), warmup, iterations, stop, progress)
        return Timing(cold, durations, "host")


def reinterpret(array: np.ndarray, dtype: str | None) -> np.ndarray:
    """An output that came back with a void dtype (``|V2``, ``|V4``) read as the NEFF's own dtype."""
    if array.dtype.kind != "V" or not dtype:
        return array
    storage = {"bfloat16": "uint16"}.get(dtype, dtype)
    try:
        return array.view(np.dtype(storage))
    except TypeError:
        return array
