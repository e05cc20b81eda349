"""``neffbench.trace``: ``torch_neuronx.trace``'s signature and result, every call an ordinary job of the workbench.

With the legacy toolchain (torch-neuronx ≤ 2.9 and neuronx-cc) the job's worker calls ``torch_neuronx.trace`` and
this returns the TorchScript holding the NEFF, as ``torch_neuronx.trace`` does. With TorchNeuron, which has no
``trace``, the job compiles through ``torch.compile(backend="neuron")`` and this returns that compiled module. With
neither, the job is the CPU check (``cpu-check``: ``torch.jit.trace``, the last step of ``torch_neuronx.trace``),
run in this process, and this returns the CPU-traced module. Each says so once per process.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from neffbench.api.derive import Derived, derive, label_of
from neffbench.api.errors import CompileFailed
from neffbench.api.job import Job
from neffbench.jobs.compile_job import CompileJob

DEFAULT_WORKDIR = "neffbench-workdir"
CPU_CHECK = "cpu-check"
_said: set[str] = set()  # what this process has been told once already


class _InProcessJob(CompileJob):
    """A cpu-check job whose stages run in this process (``neffbench.workers.in_process``)."""

    def _take_standby(self, job_dir: Path) -> Any:
        return None

    def _spawn(self, job_dir: Path) -> Any:
        from neffbench.workers.in_process import InProcessChild

        return InProcessChild(job_dir)


def _printer() -> Any:
    """Lines to the caller's stdout as it is now (Jupyter's, in a notebook), a Python traceback folded into one line
    pointing at job.log, as the command shows them."""
    from neffbench.jobs.terminal_log import TracebackFolder

    out = sys.stdout

    def write(line: str) -> None:
        print(line, file=out, flush=True)

    return TracebackFolder(write)


def _once(key: str, sentence: str, say: Callable[[str], None]) -> None:
    if key not in _said:
        _said.add(key)
        say(sentence)


def _announce(backend: str, say: Callable[[str], None]) -> None:
    if backend == CPU_CHECK:
        _once(
            backend,
            "neffbench: no Neuron toolchain here (torch_neuronx with neuronx-cc on PATH), so trace runs the cpu-check "
            "backend: torch.jit.trace on the CPU, the last step of torch_neuronx.trace. It makes no NEFF, and returns "
            "the CPU-traced module (`neffbench doctor` says what compiling would need).",
            say,
        )
    elif backend == "torchneuron":
        _once(
            backend,
            "neffbench: TorchNeuron is installed, which has no torch_neuronx.trace: each call compiles as "
            'torch.compile(module.to("neuron"), backend="neuron", fullgraph=True, dynamic=False, '
            'options={"model_name": NAME}) and returns that compiled module (its first call compiles again in this '
            "process, into TorchNeuron's own cache). compiler_args go to NEURON_CC_FLAGS; the target and LNC come "
            "from the instance and NEURON_LOGICAL_NC_CONFIG; compiler_workdir holds the job.",
            say,
        )


def _ignored(partitioner_config: Any, inline_weights_to_neff: bool, aliases: Mapping[Any, int]) -> list[str]:
    out = []
    if partitioner_config is not None:
        out.append("partitioner_config is not used: the job compiles the whole graph as one NEFF")
    if not inline_weights_to_neff:
        out.append("inline_weights_to_neff=False is not used: the job inlines the weights into the NEFF")
    return out


@functools.lru_cache(maxsize=1)
def _kernels() -> tuple[Any, ...]:
    """Every kernel that loads, read once a process: listing them parses every distribution's metadata, a fifth of
    a second each call, and a plugin installed meanwhile is found by the next process as by the window."""
    from neffbench.kernels import registry

    return tuple(registry.available())


def spec_for(func: Any, derived: Derived, compiler: Any, workdir: Path) -> Any:
    import dataclasses

    for kernel in _kernels():
        spec = kernel.spec_from_object(func, derived.saved)
        if spec is not None:
            return dataclasses.replace(spec, workdir=str(workdir), compiler=compiler)
    raise TypeError(f"no kernel can compile {label_of(func)} (a {type(func).__name__})")


def _call_text(func: Any, example_inputs: Any, compiler_args: Any, compiler_workdir: Any) -> str:
    from neffbench.api.derive import flatten

    leaves, _ = flatten(example_inputs)
    shown = ", ".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in leaves)
    return f"trace({label_of(func)}, ({shown}), compiler_args={compiler_args!r}, compiler_workdir={compiler_workdir!r})"


def _returned(backend: str, func: Any, derived: Derived, job: Job, say: Callable[[str], None]) -> Any:
    import torch

    if backend == CPU_CHECK:
        if derived.traced is not None:
            return derived.traced
        return torch.jit.load(str(job.model_pt))
    if backend == "torchneuron":
        from neffbench.backends.torchneuron_options import device

        module = func.to(device()) if isinstance(func, torch.nn.Module) else func
        return torch.compile(
            module, backend="neuron", fullgraph=True, dynamic=False, options={"model_name": job.view.name or job.job_id}
        )
    import torch_neuronx  # noqa: F401 - loading a TorchScript that holds a NEFF needs its ops registered first

    if not derived.saved.flat:
        _once(
            "flat",
            "neffbench: the module returned takes the example inputs' tensors in order, unnested (as the job's "
            "wrapper does), and returns a tuple of the output tensors",
            say,
        )
    return torch.jit.load(str(job.model_pt))


def trace(
    func: Any,
    example_inputs: Any,
    *_: Any,
    input_output_aliases: Mapping[Any, int] = {},  # noqa: B006 - torch_neuronx.trace's documented signature
    compiler_workdir: str | Path | None = None,
    compiler_args: str | Sequence[str] | None = None,
    partitioner_config: Any = None,
    inline_weights_to_neff: bool = True,
    cpu_backend: bool = False,
    backend: str = "auto",
    cache: bool = True,
    on_line: Callable[[str], None] | None = None,
    timeout: float | None = None,
) -> Any:
    """Trace ``func`` (an ``nn.Module`` or a function) with ``example_inputs`` (a tensor, or a tuple of tensors, nested
    tuples, lists and dicts allowed) as ``torch_neuronx.trace`` does, and record the call as a job of the workbench.

    The arguments up to ``cpu_backend`` are ``torch_neuronx.trace``'s: ``compiler_args`` (a string, shell-split, or a
    list) go to neuronx-cc; ``compiler_workdir`` is the workdir the job is recorded in (default
    ``neffbench-workdir``); ``cpu_backend=True`` compiles without a Neuron device. The rest are the workbench's:
    ``backend`` (``auto``, ``neuron``, ``torchneuron``, ``cpu-check``), ``cache=False`` to compile even when an
    identical call already did, ``on_line`` to receive the log's lines (default: printed to stdout), ``timeout`` in
    seconds.

    Returns the traced ``ScriptModule`` (legacy toolchain: the one holding the NEFF; cpu-check: the CPU trace), or
    with TorchNeuron the ``torch.compile``'d module. Raises :class:`neffbench.api.errors.CompileFailed` (a
    RuntimeError) whose message is the explanation of the failure, with the job attached; ValueError for arguments
    that cannot be traced; KeyboardInterrupt after Ctrl-C, once the job is recorded as cancelled.
    """
    from neffbench.api.compiler_args import compiler_spec, tokens
    from neffbench.api.explanation import Explanation
    from neffbench.api.waiting import waited
    from neffbench.jobs.cache import predicted_backend
    from neffbench.jobs.summary import summary_lines
    from neffbench.toolchain.instance import instance_family

    folder: Any = None if on_line is not None else _printer()
    say: Callable[[str], None] = on_line if on_line is not None else folder
    chosen = predicted_backend(backend)
    _announce(chosen, say)
    if input_output_aliases:
        raise NotImplementedError(
            "input_output_aliases is not supported by neffbench.trace yet: keep the state as buffers the forward "
            "writes and compile the module with `[module] state` (see the README's module kernel section)"
        )
    workdir = Path(DEFAULT_WORKDIR if compiler_workdir is None else compiler_workdir)
    derived = derive(func, example_inputs, workdir)
    compiler, left_out = compiler_spec(compiler_args, cpu_backend=cpu_backend, host_family=instance_family())
    notes = left_out + _ignored(partitioner_config, inline_weights_to_neff, input_output_aliases)
    for note in notes:
        say(f"neffbench: {note}")
    spec = spec_for(func, derived, compiler, workdir)
    origin = {
        "how": "neffbench.trace",
        "call": _call_text(func, example_inputs, compiler_args, compiler_workdir),
        "compiler_args": tokens(compiler_args),
        "left_out": notes,
        "derived": derived.record(),
    }
    runner = _InProcessJob if chosen == CPU_CHECK else CompileJob
    job = runner(
        spec,
        workdir=workdir,
        backend=CPU_CHECK if chosen == CPU_CHECK else backend,
        on_line=say,
        use_cache=cache,
        timeout=timeout,
        origin=origin,
    )

    def work() -> Any:
        job.start()
        return job.wait()

    try:
        done = Job.of(waited(work, job.cancel, name="neffbench-trace", say=say))
    finally:
        if folder is not None:
            folder.close()  # a folded traceback still pending is said
    for line in summary_lines(done.to_json(), str(done.directory)):
        say(f"neffbench: {line}")
    if not done.succeeded:
        raise CompileFailed(Explanation.of(done.directory).sentence(), done)
    return _returned(chosen, func, derived, done, say)
