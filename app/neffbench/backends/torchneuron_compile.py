"""The torchneuron compile inside the worker: move the kernel's wrapper and inputs to the device,
``torch.compile(..., backend="neuron", fullgraph=True, dynamic=False)``, call it once, synchronize, and
collect the NEFFs the call left in the job's cache (backends/torchneuron_options.py says where everything goes)."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.backends import torchneuron_options as tn
from neffbench.backends.base import Backend, JobFailure
from neffbench.backends.compiler_command import LOGFILE_NAME
from neffbench.backends.torchneuron_errors import compile_failure, exception_text, graph_break, no_device


@dataclass
class Compiled:
    """The compiled module as verification calls it: CPU tensors in, CPU tensors out."""

    call: Callable[..., Any]
    where: str
    on_device: bool
    # inputs.npz's key for each of the job's tensors by index (the NEFF's own names), or None for the
    # order of the call's arguments.
    input_keys: dict[int, str] | None = None
    # TorchNeuron's log, still copied into the job's log while verification runs the module.
    log_tail: Any = None

    def close(self) -> None:
        if self.log_tail is not None:
            self.log_tail.stop()
            self.log_tail = None


def set_isolation(job_dir: Path) -> dict[str, str | None]:
    """Point TorchNeuron's caches, debug directory and log into the job, before torch_neuronx is imported;
    returns what was there before, for :func:`restore`."""
    env = tn.isolation_env(job_dir)
    previous = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    return previous


def restore(previous: dict[str, str | None]) -> None:
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def add_problems(report: Any, spec: Any) -> None:
    """The spec fields TorchNeuron cannot honour here, as pre-flight warnings (an error for flags it would split)."""
    for problem in tn.problems(spec, tn.host()):
        (report.error if problem.severity == "error" else report.warning)(f"{problem.field}: {problem.message}")


def _device_count(backend: Backend) -> int | None:
    count = getattr(backend.torch_neuronx, "device_count", None)
    try:
        return int(count()) if callable(count) else None
    except Exception:  # noqa: BLE001 - a runtime that cannot start has no device to offer
        return 0


def _check_device(backend: Backend, device: str) -> None:
    """This TorchNeuron release compiles on a Trainium instance only: one sentence before anything starts."""
    from neffbench.toolchain.devices import neuron_devices

    count = _device_count(backend)  # TorchNeuron's own answer; a release without it leaves the device files to tell
    if count == 0 or (count is None and device == tn.DEVICE and not neuron_devices()):
        raise JobFailure(no_device(getattr(backend.torch_neuronx, "__version__", None)))


def _autoload() -> None:
    """What ``import torch`` would have done, had a standby not imported torch with autoloading off
    (jobs/standby.py): TorchNeuron registers its "neuron" device through the ``torch.backends`` entry point."""
    if os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD") != "0":
        return
    from importlib.metadata import entry_points

    for entry in entry_points(group="torch.backends"):
        if entry.value.split(":")[0].split(".")[0] == "torch_neuronx":
            entry.load()()


def _synchronize(torch: Any, device: str) -> None:
    module = getattr(torch, device.split(":")[0], None)
    sync = getattr(module, "synchronize", None)
    if callable(sync):
        sync()


def _to(value: Any, device: str) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(_to(v, device) for v in value)
    return value.to(device) if hasattr(value, "to") else value


def _library_roots(torch: Any) -> tuple[Path, ...]:
    import neffbench

    return (Path(neffbench.__file__).resolve().parent, Path(torch.__file__).resolve().parent)


def _explain(exc: BaseException, job_dir: Path, backend: Backend, torch: Any) -> JobFailure:
    from torch._dynamo import exc as dynamo_exc

    if isinstance(exc, dynamo_exc.Unsupported):
        return JobFailure(graph_break(str(exc), _library_roots(torch)))
    logfile = job_dir / "compiler" / LOGFILE_NAME
    try:
        log = logfile.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        log = []
    sentence = compile_failure(exception_text(exc), log, getattr(backend.torch_neuronx, "__version__", None))
    if sentence is None:
        first = str(exc).strip().splitlines()
        sentence = f'{type(exc).__name__} in torch.compile(backend="neuron"): {first[0] if first else "no message"}'
    return JobFailure(sentence)


def _input_keys(job: Any, neffs: list[Path], built: Any, report: Any) -> dict[int, str] | None:
    """The NEFF's name for each tensor of the job, read from the NEFF (one NEFF only)."""
    from neffbench.neff import NeffError, read_neff

    if len(neffs) != 1:
        return None
    try:
        info = read_neff(neffs[0])
    except NeffError:
        return None
    given = [
        None if name in report.unused_inputs else (str(t.dtype).replace("torch.", ""), tuple(t.shape))
        for name, t in zip(built.input_names, built.inputs)
    ]
    keys = tn.match_inputs([(t.name, t.dtype, None if t.shape is None else tuple(t.shape)) for t in info.inputs], given)
    if keys is None:
        message = (
            f"the NEFF's inputs ({', '.join(t.name for t in info.inputs)}) do not all match the job's tensors "
            "by dtype and shape: inputs.npz keeps the order of the call's arguments, and a run may refuse it"
        )
        job.out.line(f"neffbench: warning: {message}")
        job.out.event({"type": "warning", "message": message})
    return keys


def _announce(job: Any, spec: Any, job_dir: Path, compiler_dir: Path, device: str) -> None:
    """The compiler command TorchNeuron will run, as an event and a line, before anything is compiled."""
    where = tn.host()
    flags = tn.cc_flags(spec, compiler_dir)
    job.out.event(
        {
            "type": "compiler_command",
            "requested": tn.expected_command(spec, where, flags),
            "requested_args": [tn.opt_level(spec), *flags],
            "env": tn.job_env(job_dir, spec),
            "added": list(tn.ALWAYS_ADDED),
        }
    )
    job.out.line(
        f'neffbench: torch.compile(backend="neuron") on device {device!r}; NEURON_CC_FLAGS='
        f"{os.environ['NEURON_CC_FLAGS']!r}, NEURON_COMPILER_OPT_LEVEL={tn.opt_level(spec)}"
    )


def _on_device(module: Any, device: str) -> Any:
    try:
        # A copy moves to the device: the eager module stays on the CPU for the reference and verification.
        return copy.deepcopy(module).to(device)
    except Exception as exc:  # noqa: BLE001 - any module may refuse a copy or a device
        raise JobFailure(
            f"the module cannot be moved to {device!r}: {type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else 'no message'}"
        ) from exc


def _first_call(
    job: Any,
    job_dir: Path,
    backend: Backend,
    torch: Any,
    compiled: Any,
    inputs: tuple[Any, ...],
    device: str,
    log_tail: Any,
) -> None:
    """The call that compiles, with the compiler's log copied into the job's; ``log_tail`` stops if it fails."""
    compiler_dir = job_dir / "compiler"
    started: list[float] = []

    def compiler_started() -> None:
        started.append(time.perf_counter())
        job.stage = "compiling"
        job.out.stage("compiling")

    with job.log_tail(compiler_dir, compiler_dir / LOGFILE_NAME, compiler_started):
        try:
            with torch.no_grad():
                compiled(*_to(inputs, device))
            _synchronize(torch, device)
        except JobFailure:
            log_tail.stop()
            raise
        except Exception as exc:  # noqa: BLE001 - dynamo, TorchNeuron and the compiler raise anything
            log_tail.stop()
            raise _explain(exc, job_dir, backend, torch) from exc
    if started:
        job.metric("compile_s", round(time.perf_counter() - started[0], 4), "s")


def _collected_neffs(job: Any, job_dir: Path, device: str, log_tail: Any) -> list[Path]:
    """The NEFFs the call left in the job's cache, announced with TorchNeuron's debug files; none is a failure."""
    neffs = tn.neff_files(job_dir)
    artifacts = tn.debug_artifacts(job_dir)
    job.out.event(
        {
            "type": "torchneuron",
            "neff_cache": tn.NEFF_CACHE_DIR,
            "debug": artifacts,
            "log": tn.LOG_NAME,
            "device": device,
        }
    )
    if not neffs:
        log_tail.stop()
        raise JobFailure(
            f'torch.compile(backend="neuron") returned but no NEFF was found under '
            f"{tn.NEFF_CACHE_DIR}/ (TORCH_NEURONX_NEFF_CACHE_DIR): nothing was compiled for this job"
        )
    for neff in neffs:
        job.out.line(f"neffbench: NEFF {neff.relative_to(job_dir)} ({neff.stat().st_size} bytes)")
    for kind in ("fx_graphs", "stablehlo"):
        for rel in artifacts[kind]:
            job.out.line(f"neffbench: {kind.replace('_', ' ').rstrip('s')} {rel}")
    return neffs


def compile_job(job: Any, backend: Backend, spec: Any, built: Any, report: Any) -> Compiled:
    """Compile ``built`` for the job (``job`` is the worker's Job: its emitter, stage and metrics)."""
    import torch

    job_dir = Path(job.job_dir)
    compiler_dir = job_dir / "compiler"
    compiler_dir.mkdir(exist_ok=True)
    _autoload()
    device = tn.device()
    _check_device(backend, device)
    os.environ.update(tn.compiler_env(spec, compiler_dir))
    _announce(job, spec, job_dir, compiler_dir, device)
    inputs = built.inputs
    if built.state:  # its buffers hold the state, which the compiled module writes in place and keeps
        job.out.event(backend.state_event(built))
        inputs = inputs[: len(inputs) - len(built.state)]
    module = _on_device(built.module.kept(parameters=False) if built.state else built.module, device)
    compiled = torch.compile(module, backend="neuron", fullgraph=True, dynamic=False, options={"model_name": spec.name})
    # TorchNeuron's log is copied until verification has run the module too (Compiled.close stops it).
    log_tail = job.log_tail(job_dir, job_dir / tn.LOG_NAME)
    log_tail.__enter__()
    _first_call(job, job_dir, backend, torch, compiled, inputs, device, log_tail)
    if built.state:  # the call that compiled also ran, and wrote the state: verification starts from the first
        with torch.no_grad():
            for kept, before in zip(module.state(), built.inputs[len(inputs) :]):
                kept.copy_(before.to(device))
    neffs = _collected_neffs(job, job_dir, device, log_tail)

    def call(*inputs: Any) -> Any:
        out = compiled(*_to(inputs, device))
        _synchronize(torch, device)
        return _to(out, "cpu")

    real = device == tn.DEVICE
    where_text = (
        "Neuron device (TorchNeuron)"
        if real
        else (f"{device!r} (TorchNeuron's device replaced through {tn.DEVICE_ENV}; not a Neuron device)")
    )
    return Compiled(call, where_text, real, _input_keys(job, neffs, built, report), log_tail)
