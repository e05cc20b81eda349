"""The record of a job about to start: job.json's every key, with what is known before the worker runs."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

from neffbench import __version__
from neffbench.backends import registry as backends
from neffbench.jobs import cache
from neffbench.jobs.protocol import DEBUG_NAMES_ENV
from neffbench.jobs.records import iso, process_start_time
from neffbench.kernels import registry
from neffbench.spec import spec_hash, to_dict
from neffbench.views.job import SCHEMA_VERSION, legacy_bucket_fields


def new_record(
    spec: Any,
    job_dir: Path,
    *,
    backend_requested: str,
    timeout: float | None,
    argv: list[str] | None = None,
    sources: dict[str, Any] | None = None,
    taps: dict[str, Any] | None = None,
    profiled: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a job that is about to start (outcome ``running``).

    ``sources``: the source closure its build reads, when known before it starts (jobs.prepare); a kernel that
    runs user code without it gets no cache key until its build has recorded what it read. ``taps``: what a
    compare's tapped job taps and for which job (``neffbench.numerics``), None for an ordinary job. ``profiled``: a
    profiled variant's request (``{"of": JOB}``: compiled with the framework's debug names), None for any other.
    """
    known_cls = backends.recorded(backend_requested)
    known = known_cls.name if known_cls else None

    predicted = cache.predicted_backend(backend_requested)
    kernel = registry.for_spec(spec)
    bucket = kernel.buckets(spec)[0]
    digest = (sources or {}).get("digest")
    servable = digest is not None or not kernel.runs_user_code
    return {
        "schema_version": SCHEMA_VERSION,
        "job_id": job_dir.name,
        "name": spec.name,
        "kernel": kernel.name,
        "bucket": bucket,
        **legacy_bucket_fields(bucket),  # the layout before kernels, for what reads it
        "spec": to_dict(spec),
        "spec_hash": spec_hash(spec, digest),
        # What the build reads: the user's files with their sha256, the libraries' versions (user code only).
        "sources": sources,
        "weights": None,
        # Servable to later identical compiles only once this job has succeeded with the predicted backend.
        # A tapped job's NEFF depends on what it taps, not on which job asked ("of"): compares of twins share it.
        "cache_key": (
            cache.digest(cache.key(spec, predicted, digest, _what_is_tapped(taps), DEBUG_NAMES if profiled else None))
            if servable
            else None
        ),
        **({"taps_request": taps} if taps else {}),
        **({"profiled_request": profiled} if profiled else {}),
        "cache_key_backend": predicted,
        "cache": None,
        "backend_requested": backend_requested,
        "backend": known,
        "backend_reason": f"{known} requested" if known else None,
        "makes_neff": None if known_cls is None else known_cls.makes_neff,
        "cpu_backend": None,
        "cpu_backend_reason": None,
        "outcome": "running",
        "reason": None,
        "created": iso(),
        "finished": None,
        "duration_s": None,
        "stage": None,
        "stages": {},
        "timeout_s": timeout,
        **_results_to_come(),
        **_provenance(argv),
        "files": _files(),
    }


# What makes a profiled variant's NEFF another than its job's: the debug names it was compiled with.
DEBUG_NAMES = {"debug_names": sorted(DEBUG_NAMES_ENV)}


def _what_is_tapped(taps: dict[str, Any] | None) -> dict[str, Any] | None:
    return {k: v for k, v in taps.items() if k != "of"} if taps else None


def _results_to_come() -> dict[str, Any]:
    """What the worker and the runner fill in as the job goes: its command, outputs, numerics, metrics, warnings."""
    return {
        "compiler_command": {
            "requested": None,
            "requested_args": None,
            "actual": None,
            "actual_source": None,
            "dropped": [],
        },
        "compiler": None,
        "error": None,
        "neffs": [],
        "neff_note": None,
        "model_pt": None,
        "numerics": None,
        "metrics": {},
        "warnings": [],
    }


def _provenance(argv: list[str] | None) -> dict[str, Any]:
    """Where the job runs: versions, host, command line, and the processes (the worker's once it starts)."""
    pid = os.getpid()
    return {
        "versions": {
            "python": platform.python_version(),
            "torch": None,
            "torch_neuronx": None,
            "neuronx_cc": None,
            "neffbench": __version__,
        },
        "host": platform.node(),
        "argv": list(sys.argv if argv is None else argv),
        "pid": pid,
        "pid_start": process_start_time(pid),
        "worker_pid": None,
        "worker_pid_start": None,
        "exit_code": None,
    }


def _files() -> dict[str, str]:
    """The job directory's files by role, relative to it."""
    return {
        "spec": "spec.toml",
        "log": "job.log",
        "events": "events.jsonl",
        "reproduce": "reproduce.py",
        "compiler_workdir": "compiler",
        "inputs": "inputs.npz",
        "reference": "reference.npz",
        "runs": "runs",
    }
