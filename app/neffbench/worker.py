"""The compile worker: ``python -m neffbench.worker JOB_DIR [--backend B]`` runs one job and reports it as protocol lines.

Started by :class:`neffbench.jobs.JobRunner` as the leader of its own process group, with stdout
and stderr merged into one pipe. It reads ``JOB_DIR/spec.toml`` and never writes ``job.json``
(the parent is its only writer); it writes ``model.pt``, ``reproduce.py`` and ``compiler/`` (with the
torchneuron backend, TorchNeuron writes ``neff_cache/``, ``debug/`` and ``torchneuron.log`` there too:
backends/torchneuron_compile.py).

With ``--standby`` instead of JOB_DIR (:class:`neffbench.jobs.standby.StandbyWorker`) it imports
torch first, then reads the job directory as one line from stdin and runs that job; at EOF
without a line it exits 0 and says nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from neffbench.backends.base import JobFailure
from neffbench.backends.choose import resolve_in, versions
from neffbench.backends.registry import CHOICES as BACKENDS
from neffbench.backends.tracing import cpu_check_trace
from neffbench.jobs.childio import Emitter, LogTail
from neffbench import lifeline
from neffbench.jobs.standby import BUILD_CWD_ENV
from neffbench.jobs.summary import describe_numerics
from neffbench.usercode.recorder import Recorder
from neffbench.spec import load


class Job:
    """One run of the stage sequence, remembering where it is so a failure can say so."""

    def __init__(self, job_dir: Path, requested: str, emitter: Emitter):
        self.job_dir = job_dir
        self.requested = requested
        self.out = emitter
        self.stage = "start"
        self._stage_t0 = time.perf_counter()
        self._reported = 0  # pre-flight problems already written to the log

    def enter(self, stage: str) -> None:
        self.stage = stage
        self._stage_t0 = time.perf_counter()
        self.out.stage(stage)

    def metric(self, name: str, value: Any, unit: str | None = None) -> None:
        self.out.event({"type": "metric", "name": name, "value": value, "unit": unit})

    def run(self) -> None:
        spec = load(self.job_dir / "spec.toml")
        backend = resolve_in(self.job_dir, self.requested, spec)
        self.out.event(backend.event())
        self.out.line(f"neffbench: backend {backend.name}: {backend.reason}")
        if backend.cpu_backend:
            self.out.line(f"neffbench: tracing with cpu_backend=True and --target {spec.compiler.target}: "
                          f"{backend.cpu_backend_reason}")

        import torch

        from neffbench.toolchain.probe import neuronx_cc_version
        from neffbench.backends import complex_ops
        from neffbench.backends.verify import as_tuple
        from neffbench.jobs import preflight, reproduce
        from neffbench.backends.weights import weights_digest
        from neffbench.kernels import registry
        from neffbench.kernels.api import KernelError

        kernel = registry.for_spec(spec)
        self.out.event({"type": "versions", **versions(backend)})

        self.enter("inputs")
        # Only the user's code has a closure worth watching for: a built-in kernel is the workbench's own code.
        recorder = Recorder() if kernel.runs_user_code else contextlib.nullcontext()
        try:
            with recorder, _in_build_folder():
                built = kernel.build(spec)
        except KernelError as exc:
            raise JobFailure(str(exc)) from exc
        # What the build read and what it made, before anything else can fail: a rebuild compares with these.
        if isinstance(recorder, Recorder):
            self.out.event({"type": "sources", **recorder.result(built.module)})
        weights = weights_digest(built.module)
        self.out.event({"type": "weights", **weights})
        self.out.line(f"neffbench: weights digest {weights['sha256'][:12]} ({weights['tensors']} tensors, "
                      f"{weights['bytes']} bytes, {weights['method']})")
        report = preflight.Report()
        for message in built.warnings:
            report.warning(message)
        preflight.check_inputs(report, built.input_names, built.inputs,
                               keeps_int64=preflight.native_int64(spec.compiler.extra_args))
        if built.info:
            self.out.event({"type": "kernel_info", "info": built.info})
        reproduce.write(self.job_dir, spec, backend=backend, built=built, weights=weights)
        self.enter("reference")
        with _in_build_folder():
            reference, complex_found = complex_ops.watch_call(built.module, built.inputs)
        compiler = neuronx_cc_version() if complex_found and backend.makes_neff else None
        for severity, sentence in complex_ops.advice(complex_found, backend.name, compiler, torch.__version__):
            (report.error if severity == "error" else report.warning)(sentence)
        preflight.check_outputs(report, built.output_names, as_tuple(reference))
        after = weights_digest(built.module)
        if after["sha256"] != weights["sha256"]:
            report.warning("calling the module changed its own parameters or buffers (a counter, a cache, running "
                           "statistics): two calls with the same inputs can differ, so later comparisons may not "
                           "match although nothing is wrong with the compile")
        self._preflight_gate(report)

        self.enter("tracing")
        t0 = time.perf_counter()
        step = backend.trace(self, spec, built, report, kernel)
        trace_s = time.perf_counter() - t0
        self.metric("trace_s", round(trace_s, 4), "s")
        self.out.line(f"neffbench: {backend.trace_verb} in {trace_s:.2f} s{backend.trace_note}")

        self.enter("saving")
        self._save_arrays(built, reference, report, step.input_keys)
        if step.traced is not None:  # TorchNeuron's product is the NEFF alone: no TorchScript holds it
            self._save_model_pt(step.traced)

        self.enter("verifying")
        numerics = backend.verify(step, built, spec, reference)
        self.out.event({"type": "numerics", **numerics})
        self.out.line(f"neffbench: {describe_numerics(numerics)}")
        if numerics["checked"] and not numerics["match"]:
            raise JobFailure(f"outputs differ from the eager reference beyond tolerance (max abs error "
                             f"{numerics['max_abs_error']:.3g}, atol {numerics['atol']:g}, rtol {numerics['rtol']:g})")
        self.enter("done")

    def _save_model_pt(self, traced: Any) -> None:
        import torch

        model_pt = self.job_dir / "model.pt"
        # Written beside and renamed when whole: a save that fails half-way (a Python op TorchScript cannot
        # export, a full disk) leaves no model.pt for a later run to trip over.
        partial = self.job_dir / f".model.pt.{os.getpid()}.tmp"
        try:
            torch.jit.save(traced, str(partial))
            os.replace(partial, model_pt)
        except RuntimeError as exc:  # torch reports a failed write as a RuntimeError
            partial.unlink(missing_ok=True)
            if "write" not in str(exc).lower():
                raise
            raise JobFailure(f"cannot write {model_pt}: {str(exc).strip().splitlines()[0]}") from exc
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
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

    def _preflight_gate(self, report: Any, final: bool = False) -> None:
        """Record what pre-flight found so far; its first error fails the job."""
        for severity, message in report.problems[self._reported:]:
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

    def log_tail(self, folder: Path, logfile: Path, started: Any = None) -> LogTail:
        """Copies the compiler's log file to the parent as it grows (a backend's trace step uses it)."""
        return LogTail(self.out, folder, logfile, started)

    def probe(self, report: Any, built: Any, *, blocking: bool) -> Any:
        """The CPU trace (the cpu-check job itself, or a probe before a Neuron compile) and its graph checks.

        The probe is stricter than torch_neuronx.trace in places, so before a Neuron compile its own
        failure is a warning, never a reason not to compile.
        """
        from neffbench.jobs import preflight

        try:
            traced, tracer_warnings = cpu_check_trace(built.module, built.inputs)
        except Exception as exc:  # noqa: BLE001 - the user's module may fail the trace any way it likes
            if blocking:
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
            report.warning(f"the CPU trace probe failed ({type(exc).__name__}: {first}); the Neuron compile "
                           "goes ahead, since torch_neuronx.trace is more lenient in places.")
            self._preflight_gate(report, final=True)
            return None
        for message in tracer_warnings:
            report.warning(message)
        preflight.analyze_graph(report, traced, built.input_names, built.output_names)
        self._preflight_gate(report, final=True)
        return traced


@contextlib.contextmanager
def _in_build_folder() -> Any:
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


def _reason(exc: BaseException, stage: str) -> str:
    if isinstance(exc, OSError) and exc.errno is not None and exc.filename:
        # A full disk, a file-size limit, a read-only folder: the path and the cause, not a traceback's words.
        return f"cannot write {exc.filename}: {exc.strerror or os.strerror(exc.errno)} (during {stage})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__} during {stage}: {text[0] if text else 'no message'}"


def _preload() -> None:
    """What every job imports, before there is a job: torch is most of a worker's start."""
    try:
        import torch  # noqa: F401

        from neffbench.backends import verify  # noqa: F401
        from neffbench.jobs import preflight, reproduce  # noqa: F401
        from neffbench.kernels import registry

        # The job's kernel is not known yet; the default one is the likeliest. (Preloading every kernel
        # would put the others' imports on the path of each job: torch's import already outlasts the parent.)
        registry.get(registry.DEFAULT).preload()
    except Exception:  # noqa: BLE001 - the job imports them again, fails the same way and reports it
        traceback.print_exc(file=sys.stderr)
    # Not torch_neuronx: whether to set the platform override before importing it depends on the spec.


def _wait_for_job() -> Path | None:
    """The job directory the parent sends on stdin, or None when it closed stdin without one."""
    _preload()
    line = sys.stdin.buffer.readline()
    if not line.endswith(b"\n"):
        return None
    # From here on as a spawned worker: nothing to read on stdin (the compiler inherits it).
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return Path(os.fsdecode(line[:-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m neffbench.worker", description=__doc__.splitlines()[0])
    parser.add_argument("job_dir", type=Path, nargs="?")
    parser.add_argument("--backend", choices=BACKENDS, default="auto")
    parser.add_argument("--standby", action="store_true",
                        help="import torch first, then read JOB_DIR as one line from stdin (exit 0 at EOF)")
    args = parser.parse_args(argv)
    if (args.job_dir is None) != args.standby:
        parser.error("give either JOB_DIR or --standby")
    # If the parent dies, however it dies, this worker's group (the compiler and its helpers) goes too.
    lifeline.watch()
    # A crash in torch or the compiler bindings still leaves a Python traceback in job.log.
    faulthandler.enable()
    if args.standby:
        args.job_dir = _wait_for_job()
        if args.job_dir is None:
            return 0  # the parent went away, or ran the job some other way
    out = Emitter()
    job = Job(args.job_dir, args.backend, out)
    started = " (a standby, started before the job)" if args.standby else ""
    out.line(f"neffbench: worker pid {os.getpid()} for job {args.job_dir.name}{started}")
    try:
        if args.standby:
            os.chdir(args.job_dir)  # where a spawned worker starts
        job.run()
    except JobFailure as exc:
        if exc.__cause__ is not None:  # the whole story stays in job.log; the terminal gets the sentence
            cause = exc.__cause__
            traceback.print_exception(type(cause), cause, cause.__traceback__, file=sys.stderr)
        reason = f"{exc} (during {job.stage})"
        out.line(f"neffbench: failed: {reason}")
        out.event({"type": "outcome", "outcome": "failed", "reason": reason})
        return 1
    except Exception as exc:  # noqa: BLE001 - any error in the user's module or the toolchain ends the job
        traceback.print_exc(file=sys.stderr)
        reason = _reason(exc, job.stage)
        out.line(f"neffbench: failed: {reason}")
        out.event({"type": "outcome", "outcome": "failed", "reason": reason})
        return 1
    out.event({"type": "outcome", "outcome": "succeeded", "reason": None})
    return 0


def _exit(code: int) -> None:
    """Leave without the interpreter's teardown: with torch loaded it takes a few hundred ms, and
    everything the job wrote is already closed (model.pt) or unbuffered (the protocol)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    _exit(main())
