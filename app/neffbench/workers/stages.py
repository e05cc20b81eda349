"""The compile worker's job: the stage sequence from the spec to a verified NEFF (or TorchScript), as protocol lines.

It reads ``JOB_DIR/spec.toml`` and never writes ``job.json`` (the parent is its only writer); it writes
``model.pt``, ``reproduce.py``, ``inputs.npz``, ``reference.npz``, ``structure.json`` and ``compiler/``.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from neffbench.backends.base import Backend, JobFailure
from neffbench.backends.choose import resolve_in, versions
from neffbench.jobs.logtail import LogTail
from neffbench.jobs.standby import BUILD_CWD_ENV
from neffbench.jobs.summary import describe_numerics
from neffbench.kernels import steps
from neffbench.procs import Emitter, replacing
from neffbench.spec import load
from neffbench.usercode.recorder import Recorder
from neffbench.workers import compile_trace, profiled, structure_stage, taps


class Job:
    """One run of the stage sequence, remembering where it is so a failure can say so."""

    def __init__(self, job_dir: Path, requested: str, emitter: Emitter):
        self.job_dir = job_dir
        self.requested = requested
        self.out = emitter
        self.stage = "start"
        self.runs_user_code = False  # whether the job's kernel runs the user's own code (their files may raise)
        self._stage_t0 = time.perf_counter()
        self._reported = 0  # pre-flight problems already written to the log
        self.tracer_warnings: Any = None  # the CPU trace's, once it ran (backends.tracing.TracerWarnings)
        self.cpu_traced: Any = None  # the CPU trace itself, once it ran: the structure reads its operations
        self.weights: dict[str, Any] = {}  # the built module's weights digest (backends.weights)

    def enter(self, stage: str) -> None:
        self.stage = stage
        self._stage_t0 = time.perf_counter()
        self.out.stage(stage)

    def metric(self, name: str, value: Any, unit: str | None = None) -> None:
        self.out.event({"type": "metric", "name": name, "value": value, "unit": unit})

    def run(self) -> None:
        from neffbench.kernels import registry

        spec = load(self.job_dir / "spec.toml")
        profiled.apply(self.job_dir, self.out)  # before anything imports the toolchain, which reads them
        backend = self._backend(spec)
        kernel = registry.for_spec(spec)
        self.runs_user_code = kernel.runs_user_code
        self.out.event({"type": "versions", **versions(backend)})
        self.enter("building")
        built, report = self._build(kernel, spec, backend)
        self.enter("reference")
        reference = self._reference(built, kernel, report, backend)
        tapped = taps.apply(self.job_dir, built, self.out)  # a compare's job: its module's tapped variant
        reference = reference if tapped is None else tapped
        self.preflight_gate(report)
        self.enter("tracing")
        step = self._trace(kernel, spec, backend, built, report)
        self.enter("saving")
        self._save_arrays(built, reference, report, step.input_keys)
        if step.traced is not None:  # TorchNeuron's product is the NEFF alone: no TorchScript holds it
            self._save_model_pt(step.traced)
        if tapped is None and not profiled.requested(self.job_dir):  # a variant's structure is its job's
            self.enter("structure")
            with build_folder():
                structure_stage.run(self, built)
        self.enter("verifying")
        self._verify(spec, backend, built, reference, step)
        self.enter("done")

    def _backend(self, spec: Any) -> Backend:
        """The backend this job gets, reported (TorchNeuron's caches and log pointed into the job first)."""
        backend = resolve_in(self.job_dir, self.requested, spec)
        self.out.event(backend.event())
        self.out.line(f"neffbench: backend {backend.name}: {backend.reason}")
        if backend.cpu_backend:
            self.out.line(
                f"neffbench: tracing with cpu_backend=True and --target {spec.compiler.target}: "
                f"{backend.cpu_backend_reason}"
            )
        return backend

    def _build(self, kernel: Any, spec: Any, backend: Backend) -> tuple[Any, Any]:
        """The kernel's module and inputs, what the build read, the weights' digest, the inputs' pre-flight."""
        from neffbench.backends.weights import weights_digest
        from neffbench.jobs import preflight, reproduce
        from neffbench.kernels.api import KernelError

        # Only the user's code has a closure worth watching for: a built-in kernel is the workbench's own code.
        recorder = Recorder() if kernel.runs_user_code else contextlib.nullcontext()
        try:
            # The kernel names the steps inside its build (the first forward call, its outputs) as it starts them.
            with recorder, build_folder(), steps.listening(self.enter):
                built = kernel.build(spec)
        except KernelError as exc:
            raise JobFailure(str(exc)) from exc
        self.enter("weights")
        # What the build read and what it made, before anything else can fail: a rebuild compares with these.
        if isinstance(recorder, Recorder):
            self.out.event({"type": "sources", **recorder.result(built.module)})
        weights = self.weights = weights_digest(built.module)
        self.out.event({"type": "weights", **weights})
        self.out.line(
            f"neffbench: weights digest {weights['sha256'][:12]} ({weights['tensors']} tensors, "
            f"{weights['bytes']} bytes, {weights['method']})"
        )
        report = preflight.Report()
        for message in built.warnings:
            report.warning(message)
        preflight.check_inputs(report, built, spec, makes_neff=backend.makes_neff)
        if built.info:
            self.out.event({"type": "kernel_info", "info": built.info})
        reproduce.write(self.job_dir, spec, backend=backend, built=built, weights=weights)
        return built, report

    def _reference(self, built: Any, kernel: Any, report: Any, backend: Backend) -> Any:
        """The eager outputs (the reference every later check compares with), and what pre-flight makes of them
        and of what the call did besides returning."""
        import torch

        from neffbench.backends import complex_ops, eager
        from neffbench.jobs import preflight, preflight_effects
        from neffbench.toolchain.host import neuronx_cc_version

        with build_folder():
            called = eager.call(built)
        compiler = neuronx_cc_version() if called.complex_found and backend.makes_neff else None
        for severity, sentence in complex_ops.advice(called.complex_found, backend, compiler, torch.__version__):
            (report.error if severity == "error" else report.warning)(sentence)
        preflight.check_outputs(report, built.output_names, called.outputs)
        preflight_effects.check_effects(report, built, called.effects, kernel.state_remedy)
        preflight_effects.check_repeatable(report, built, called.outputs, called.effects)
        return called.outputs

    def _trace(self, kernel: Any, spec: Any, backend: Backend, built: Any, report: Any) -> Any:
        """The backend's trace step: what it traced (None with TorchNeuron), compiled, and named the inputs."""
        t0 = time.perf_counter()
        step = backend.trace(self, spec, built, report, kernel)
        trace_s = time.perf_counter() - t0
        self.metric("trace_s", round(trace_s, 4), "s")
        self.out.line(f"neffbench: {backend.trace_verb} in {trace_s:.2f} s{backend.trace_note}")
        return step

    def _verify(self, spec: Any, backend: Backend, built: Any, reference: Any, step: Any) -> None:
        numerics = backend.verify(step, built, spec, reference)
        self.out.event({"type": "numerics", **numerics})
        self.out.line(f"neffbench: {describe_numerics(numerics)}")
        if numerics["checked"] and not numerics["match"] and taps.requested(self.job_dir) is not None:
            # A tapped job exists to show where outputs differ: that they do is what its compare reports.
            self.out.line("neffbench: the tapped variant differs from its eager run: the compare says where")
        elif numerics["checked"] and not numerics["match"]:
            raise JobFailure(self._mismatch(numerics))

    def _mismatch(self, numerics: dict[str, Any]) -> str:
        """Why verification failed, in the words that fit: a state that did not carry, a trace that holds only for
        its own inputs (pointing at the user's TracerWarning), or outputs that differ."""
        from neffbench.backends.verify import not_general

        tolerance = f"atol {numerics['atol']:g}, rtol {numerics['rtol']:g}"
        for step in numerics.get("steps") or []:
            if not step["match"]:
                return (
                    f"call {step['step'] + 1} of {len(numerics['steps'])}, with the state carried from the call "
                    f"before, differs from the eager module beyond tolerance (max abs error "
                    f"{step['max_abs_error']:.3g}, {tolerance})"
                )
        if numerics["example_inputs"]["match"] and not numerics["fresh_inputs"]["match"]:
            fixed_at = self.tracer_warnings.first_own if self.tracer_warnings is not None else None
            return f"{not_general(numerics['fresh_inputs'], fixed_at)} ({tolerance})"
        return (
            f"outputs differ from the eager reference beyond tolerance (max abs error "
            f"{numerics['max_abs_error']:.3g}, {tolerance})"
        )

    def log_tail(self, folder: Path, logfile: Path, started: Any = None) -> LogTail:
        """Copies the compiler's log file to the parent as it grows (a backend's trace step uses it)."""
        return LogTail(self.out, folder, logfile, started)

    def cpu_trace(self, report: Any, built: Any, *, blocking: bool) -> Any:
        """The CPU trace and its graph checks (a backend's trace step uses it)."""
        return compile_trace.cpu_trace(self, report, built, blocking=blocking)

    def _save_model_pt(self, traced: Any) -> None:
        import torch

        model_pt = self.job_dir / "model.pt"
        # Written beside and renamed when whole: a save that fails half-way (a Python op TorchScript cannot
        # export, a full disk) leaves no model.pt for a later run to trip over.
        try:
            with replacing(model_pt, fsync=False) as partial:
                torch.jit.save(traced, str(partial))
        except RuntimeError as exc:  # torch reports a failed write as a RuntimeError
            if "write" not in str(exc).lower():
                raise
            raise JobFailure(f"cannot write {model_pt}: {str(exc).strip().splitlines()[0]}") from exc
        self.metric("model_pt_bytes", model_pt.stat().st_size, "B")
        self.out.line(f"neffbench: saved model.pt ({model_pt.stat().st_size} bytes)")

    def _save_arrays(self, built: Any, reference: Any, report: Any, keys: dict[int, str] | None = None) -> None:
        """inputs.npz and reference.npz under the NEFF's own names, so any runtime can run it again later
        (``keys``: those names read from the NEFF, by input index; else the trace's order)."""
        from neffbench.backends.verify import as_tuple
        from neffbench.runs import arrays

        inputs, kept = arrays.Arrays(), 0
        for i, (name, tensor) in enumerate(zip(built.input_names, built.inputs)):
            if keys is not None:
                key = keys.get(i, f"unused:{name}")
            elif name in report.unused_inputs:
                key = f"unused:{name}"
            else:
                key, kept = f"input{kept}", kept + 1
            inputs.add(key, *arrays.from_tensor(tensor), role=name)
        outputs = arrays.Arrays()
        for i, tensor in enumerate(as_tuple(reference)):
            role = built.output_names[i] if i < len(built.output_names) else None
            outputs.add(f"output{i}", *arrays.from_tensor(tensor), role=role)
        arrays.save(self.job_dir / arrays.INPUTS_NAME, inputs)
        arrays.save(self.job_dir / arrays.REFERENCE_NAME, outputs)

    def preflight_gate(self, report: Any, final: bool = False) -> None:
        """Record what pre-flight found so far; its first error fails the job."""
        for severity, message in report.problems[self._reported :]:
            self.out.line(f"neffbench: pre-flight {severity}: {message}")
            if severity == "warning":
                self.out.event({"type": "warning", "message": message})
        self._reported = len(report.problems)
        if final:
            self.out.event({"type": "preflight", **report.to_json()})
        if report.errors:
            if not final:
                self.out.event({"type": "preflight", **report.to_json()})
            raise JobFailure(f"pre-flight: {report.errors[0]}")


@contextlib.contextmanager
def build_folder() -> Any:
    """The user's code runs where the command was typed, as when they run it themselves (relative paths in it
    find their files); the job's own work stays in the job directory."""
    folder = os.environ.get(BUILD_CWD_ENV)
    if not folder or not os.path.isdir(folder):
        yield
        return
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)
