"""The compile worker's events: what its protocol lines (:mod:`neffbench.procs`' line protocol) carry.

The worker (``python -m neffbench.workers.compile JOB_DIR``) writes UTF-8 lines to its stdout, with stderr
merged into the same pipe, and the compiler it spawns inherits both. Lines the worker copies from
``log-neuron-cc.txt`` as the compiler writes it start with LOGFILE_PREFIX. The parent splits the byte
stream into lines and tells events from log text with :mod:`neffbench.procs`.

Events passed to ``on_event`` are dicts with a ``type``; every event the runner forwards also
carries ``job_id``, ``bucket`` and the legacy bucket field (``views.job.legacy_bucket_fields``). ``t`` is a Unix
time in seconds.

From the worker:

- ``{"type": "stage", "stage": "building"|"forward"|"outputs"|"weights"|"reference"|"tracing"|"compiling"|"saving"|
  "structure"|"verifying"|"done", "t": ...}`` (``forward`` and ``outputs`` only for a kernel whose build calls the module, as
  the module kernel's does; ``compiling`` appears only with the neuron and torchneuron backends, when the compiler
  starts; the parent enters it itself, with ``"source": "compiler output"``, when the compiler's first log record
  arrives sooner). Jobs of earlier versions had one stage ``inputs`` for the first four.
- ``{"type": "backend", "backend": "neuron"|"torchneuron"|"cpu-check", "reason": "...", "makes_neff": bool,
  "cpu_backend": bool|None, "cpu_backend_reason": str|None, "flavour": "legacy"|"native"|None}``
- ``{"type": "versions", "python": ..., "torch": ..., "torch_neuronx": ..., "neuronx_cc": ...}``
- ``{"type": "compiler_command", "requested": [...], "requested_args": [...]}``: the neuronx-cc argv
  torch_neuronx.trace is expected to run, and the ``compiler_args`` handed to it. With torchneuron also
  ``"env"`` (what the job set for TorchNeuron) and ``"added"`` (the flags TorchNeuron always adds).
- ``{"type": "torchneuron", "neff_cache": "neff_cache", "debug": {"fx_graphs": [...], "stablehlo": [...],
  "other": [...]}, "log": "torchneuron.log", "device": "neuron", "cache_log": {...}}``: what a torchneuron
  compile left in the job directory (paths relative to it).
- ``{"type": "metric", "name": "trace_s", "value": 1.2, "unit": "s"}``
- ``{"type": "warning", "message": "..."}`` (tracer warnings and the like)
- ``{"type": "numerics", ...}``: see :mod:`neffbench.backends.verify`.
- ``{"type": "outcome", "outcome": "succeeded"|"failed", "reason": str|None}``: the worker's own verdict.

Derived by the parent from compiler log lines (:mod:`neffbench.compilerlog.reader`):

- ``{"type": "pipeline", "passes": ["Frontend", ...]}``
- ``{"type": "pass", "name": "Frontend", "path": "root/Frontend", "state": "started"|"finished",
  "duration_s": float|None, "t": ...}``
- ``{"type": "compiler_error", "code": "NLA001"|None, "message": "...", "line": "..."}`` (first per code)
- ``{"type": "compiler_status", "status": "PASS"|"FAIL"|"ERROR"}``
- ``{"type": "progress", "dots": 142}``: the compiler's progress dots on a line not ended yet

From the parent itself:

- ``{"type": "started", "job_dir": "...", "pid": worker pid}``
- ``{"type": "finished", "outcome": "succeeded"|"failed"|"cancelled"|"interrupted", "reason": str|None,
  "exit_code": int|None, "job_dir": "...", "backend": ..., "makes_neff": bool|None, "neffs": [...],
  "neff_note": str|None}``: always the last event of a job, and authoritative (job.json holds the rest).
"""

from __future__ import annotations

# Marks a line the worker copied from log-neuron-cc.txt. The compiler also prints records to stdout
# (at --verbose info, the same text), so the parent needs to know a line's source to drop exactly
# one copy of each record; it strips the marker before the line reaches job.log or on_line.
# JOB_DIR/taps.json: what a compare's tapped job taps ({"patterns", "depth", "of"}), for the worker.
TAPS_REQUEST = "taps.json"
# JOB_DIR/profiled.json: a profiled variant ({"of": JOB}), compiled with the framework's debug names so that a
# profile maps device time to the model's layers (aws-neuron-sdk tools/neuron-explorer/how-to-profile-workload.rst).
PROFILED_REQUEST = "profiled.json"
DEBUG_NAMES_ENV = {"XLA_IR_DEBUG": "1", "XLA_HLO_DEBUG": "1", "NEURON_FRAMEWORK_DEBUG": "1"}
LOGFILE_PREFIX = "@@neffbench-cclog@@ "
STAGES = (
    "building",
    "forward",
    "outputs",
    "weights",
    "reference",
    "tracing",
    "compiling",
    "saving",
    "structure",
    "verifying",
    "done",
)
# How a failure's reason names the stage it happened in, where the stage's name alone would not say it.
STAGE_WORDS = {
    "building": "the build of the module and its inputs",
    "forward": "the first call of the module's forward",
    "outputs": "the reading of what the forward returned",
    "weights": "the weights digest",
    "structure": "the reading of the module's structure",
    "inputs": "the build of the module, its inputs, its first call or its weights digest",  # jobs of earlier versions
}


def stage_words(stage: str) -> str:
    """``the first call of the module's forward`` for ``forward``; other stages (``tracing``) by their name."""
    return STAGE_WORDS.get(stage, stage)


def encode_logfile_line(line: str) -> str:
    """A line copied from the compiler's log file, marked so (with its newline)."""
    return LOGFILE_PREFIX + line + "\n"
