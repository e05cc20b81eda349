"""The runtimes a run can use, behind one small interface: load once, call, time.

``nrtpy`` (Neuron SDK 2.32+) and ``spike`` (nkipy) load the NEFF itself onto a NeuronCore;
``torchscript`` loads the job's ``model.pt`` after ``import torch_neuronx`` (which places it on a
NeuronCore); ``cpu`` runs the job's module on the CPU (the TorchScript of a cpu-check job, else the
eager module) and is labelled CPU everywhere: it is never a device figure. Runs in the run child.
"""

from __future__ import annotations

import glob
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

RUNTIMES = ("auto", "nrtpy", "spike", "torchscript", "cpu")
DEVICE_RUNTIMES = ("nrtpy", "spike", "torchscript")
LABELS = {
    "nrtpy": "NeuronCore (nrtpy)",
    "spike": "NeuronCore (spike)",
    "torchscript": "NeuronCore (TorchScript)",
    "cpu": "CPU",
}


class RuntimeUnavailable(RuntimeError):
    """The runtime asked for cannot run here; one sentence saying why."""


def neuron_devices() -> list[str]:
    return sorted(glob.glob("/dev/neuron[0-9]*"))


def _importable(name: str) -> tuple[bool, str]:
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - placeholder packages raise ImportError, broken ones anything
        return False, f"{name} does not import ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    return True, f"{name} {getattr(module, '__version__', '')}".strip() + " imports"


def availability(
    has_neff: bool, has_job: bool, neuron_model_pt: bool, no_neff: str = "a cpu-check job makes no NEFF"
) -> dict[str, tuple[bool, bool, str]]:
    """Each runtime: (can be asked for, auto would pick it, why). ``neuron_model_pt``: model.pt holds a NEFF.

    Asked for by name, a device runtime needs only to import (without a device the runtime itself
    says so, with its own error); ``auto`` picks one only when a Neuron device is present.
    """
    devices = bool(neuron_devices())
    device_note = "" if devices else "; no Neuron device under /dev/neuron*"
    out: dict[str, tuple[bool, bool, str]] = {}
    for name in ("nrtpy", "spike"):
        ok, why = _importable(name)
        if ok and not has_neff:
            ok, why = False, f"there is no NEFF to load ({no_neff})"
        out[name] = (ok, ok and devices, why + device_note if ok else why)
    ok, why = _importable("torch_neuronx")
    if ok and not neuron_model_pt:
        ok, why = False, "the job has no model.pt traced by torch_neuronx"
    out["torchscript"] = (ok, ok and devices, why + device_note if ok else why)
    why = "the job's module on the CPU" if has_job else "a NEFF without its job has no module to run on the CPU"
    out["cpu"] = (has_job, has_job, why)
    return out


def choose(requested: str, table: dict[str, tuple[bool, bool, str]]) -> tuple[str, str]:
    """(runtime, reason): auto prefers a device runtime when a device is present, else cpu."""
    if requested != "auto":
        ok, _, why = table[requested]
        if not ok:
            raise RuntimeUnavailable(f"the {requested} runtime cannot run here: {why}.")
        return requested, f"{requested} requested ({why})"
    for name in DEVICE_RUNTIMES:
        _, auto, why = table[name]
        if auto:
            return name, f"auto: {why}"
    reasons = "; ".join(f"{n}: {table[n][2]}" for n in DEVICE_RUNTIMES)
    if not table["cpu"][1]:
        raise RuntimeUnavailable(f"no runtime can run this here: {reasons}; cpu: {table['cpu'][2]}.")
    return "cpu", f"auto: no device runtime can run here ({reasons}), so the CPU runs it"


@dataclass
class Timing:
    cold_ms: float
    durations_ms: list[float]
    mode: str
    reported: dict[str, Any] | None = None  # what the runtime's own benchmark returned


class Session:
    """A loaded target: ``call`` returns outputs by NEFF name; ``bench`` times warm-up plus iterations."""

    name = ""
    modes: tuple[str, ...] = ("host",)
    variant: str | None = None  # for the CPU: "TorchScript (model.pt)" or "eager module"
    secondary: Session | None = None  # timed after this one (the CPU's eager module beside its TorchScript)

    def call(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def bench(
        self, warmup: int, iterations: int, mode: str, stop: Callable[[], bool], progress: Progress | None = None
    ) -> Timing:
        raise NotImplementedError


# progress(phase, done, total, counted): "warmup" or "timed", calls done of total; counted False when the
# runtime's own benchmark makes the calls and only their total is known.
Progress = Callable[[str, int, int, bool], None]


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


class _NrtSession(Session):
    """nrtpy and spike share one shape: Model.load_from_neff, Tensor.from_numpy, __call__, benchmark."""

    modes = ("device", "host")

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


class _TorchSession(Session):
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


def nrt_session(
    name: str,
    neff: str,
    feeds: dict[str, np.ndarray],
    core: int,
    out_dtypes: dict[str, str],
    in_dtypes: dict[str, str] | None = None,
) -> Session:
    if name == "nrtpy":
        nrtpy = importlib.import_module("nrtpy")
        if hasattr(nrtpy, "configure"):
            nrtpy.configure(visible_cores=[core])
        return _NrtSession(name, nrtpy.NrtpyModel, nrtpy.NrtpyTensor, neff, feeds, 0, out_dtypes)
    spike = importlib.import_module("spike")
    return _NrtSession(
        name, spike.SpikeModel, spike.SpikeTensor, neff, _spike_feeds(feeds, in_dtypes or {}), core, out_dtypes
    )


def _spike_feeds(feeds: dict[str, np.ndarray], dtypes: dict[str, str]) -> dict[str, np.ndarray]:
    """spike checks dtypes itself and knows bfloat16 only as ml_dtypes.bfloat16 (which it depends on):
    the stored bits are viewed as that. nrtpy checks sizes only and takes the bits as they are."""
    if "bfloat16" not in dtypes.values():
        return feeds
    try:
        import ml_dtypes
    except ImportError:
        return feeds
    return {k: v.view(ml_dtypes.bfloat16) if dtypes.get(k) == "bfloat16" else v for k, v in feeds.items()}


def torch_session(name: str, module: Any, args: tuple[Any, ...], out_names: list[str]) -> Session:
    return _TorchSession(name, module, args, out_names)
