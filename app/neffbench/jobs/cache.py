"""Identical compiles come from a cache: a job whose key matches an earlier succeeded job reuses its NEFF.

``torch_neuronx.trace`` never caches (every trace recompiles); the workbench does. The key covers
everything that can change the NEFF and nothing else: the spec hash (kernel, parameters, tensor specs, bucket,
and for user code every file its build read, with the versions of the libraries its code came from), the backend, the compiler arguments the spec asks for, and the
versions of torch, torch-neuronx and neuronx-cc. Failures are never served. A hit runs no worker:
the NEFF and the job's other products are hard-linked (copied across file systems) into a new job
directory whose record says where they came from and how long the original compile took.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
from collections.abc import Collection
from pathlib import Path
from typing import Any

from neffbench.backends import registry
from neffbench.jobs import records
from neffbench.spec import spec_hash
from neffbench.toolchain.facts import dist_version
from neffbench.toolchain.flavour import neuronx_flavour
from neffbench.versions import torch_neuronx_version, torch_version
from neffbench.views.fields import RecordError, as_dict, number, text
from neffbench.views.job import JobView

# What a hit brings along besides the NEFFs: the module, the inputs and outputs that travel with it,
# the script, and the compiler's own small files (its log and command).
# (reference64.npz: a compare's tapped job's float64 reference.)
PRODUCTS = ("model.pt", "inputs.npz", "reference.npz", "reference64.npz", "reproduce.py", "structure.json")
COMPILER_FILES = ("compiler/command.txt", "compiler/log-neuron-cc.txt", "torchneuron.log")


def predicted_backend(requested: str) -> str:
    """The backend the worker will resolve ``auto`` to, judged without importing anything (a torch_neuronx
    without distribution metadata is taken for the legacy flavour; a wrong guess only costs a cache hit)."""
    if requested != "auto":
        return requested
    found = importlib.util.find_spec("torch_neuronx") is not None and shutil.which("neuronx-cc") is not None
    if not found:
        return "cpu-check"
    return "torchneuron" if neuronx_flavour(dist_version("torch-neuronx")) == "native" else "neuron"


def key(
    spec: Any,
    backend: str,
    sources: str | None = None,
    taps: dict[str, Any] | None = None,
    variant: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``sources``: the digest of the build's source closure (usercode.closure), for kernels that run user code;
    ``taps``: what a compare's tapped job taps (its NEFF is another, and is never an ordinary compile's);
    ``variant``: what else makes its NEFF another (a profiled variant's debug names)."""
    return {
        **({"taps": taps} if taps else {}),
        **({"variant": variant} if variant else {}),
        "spec_hash": spec_hash(spec, sources),
        "backend": backend,
        "compiler_args": cls.cache_part(spec) if (cls := registry.recorded(backend)) else None,
        "versions": {
            "torch": torch_version(),
            "torch_neuronx": torch_neuronx_version(),
            "neuronx_cc": dist_version("neuronx-cc"),
        },
    }


def digest(k: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(k, sort_keys=True).encode()).hexdigest()


def lookup(workdir: Path, wanted: str) -> tuple[JobView, Path] | None:
    """The newest succeeded job of that key whose NEFFs are still there as recorded (a newer neffbench's job is
    never served: what its record means is not known here)."""
    return lookup_all(workdir, {wanted}).get(wanted)


def lookup_all(workdir: Path, wanted: Collection[str]) -> dict[str, tuple[JobView, Path]]:
    """``lookup`` of several keys in one pass over the workdir: each key found, with what it would serve."""
    best: dict[str, tuple[JobView, Path]] = {}
    for job_dir, record in records.records_mentioning(workdir, wanted):
        try:
            job = JobView.of(record, str(job_dir / records.RECORD_NAME))
        except RecordError:
            continue
        key = job.cache_key
        if key is None or key not in wanted or job.outcome != "succeeded":
            continue
        intact = all(
            isinstance(n.get("path"), str)
            and (job_dir / n["path"]).is_file()
            and (job_dir / n["path"]).stat().st_size == n.get("size")
            for n in job.neffs
        )
        found = best.get(key)
        if intact and (found is None or (job.created or "") > (found[0].created or "")):
            best[key] = (job, job_dir)
    return best


def _link(src: Path, dst: Path) -> str:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
        return "hard link"
    except OSError:
        shutil.copy2(src, dst)
        return "copy"


def serve(source: JobView, source_dir: Path, job_dir: Path, record: dict[str, Any]) -> list[str]:
    """Bring the source job's products into ``job_dir`` and fill ``record`` from the source's; returns log lines."""
    how = set()
    debug = as_dict(source.torchneuron.get("debug"))
    files = (
        [n["path"] for n in source.neffs if isinstance(n.get("path"), str)]
        + list(PRODUCTS)
        + list(COMPILER_FILES)
        + [rel for paths in debug.values() if isinstance(paths, list) for rel in paths]
    )
    for rel in files:
        src = source_dir / rel
        if src.is_file():
            how.add(_link(src, job_dir / rel))
    origin = text(source.cache.get("from")) or str(source_dir)
    saved = number(source.cache.get("saved_s")) or source.duration_s
    for field in (
        "backend",
        "backend_reason",
        "makes_neff",
        "cpu_backend",
        "cpu_backend_reason",
        "numerics",
        "compiler",
        "compiler_command",
        "neff_note",
        "kernel_info",
        "preflight",
        "analyze",
        "warnings",
        "torchneuron",
        "sources",
        "weights",
        "taps",
        "state",
    ):
        if field in source.raw:  # carried over as written: the new record says what the source's said
            record[field] = source.raw[field]
    record["versions"] = {**record.get("versions", {}), **(source.versions or {})}
    record["neffs"] = records.neff_entries(job_dir, record.get("backend"))
    model_pt = job_dir / "model.pt"
    record["model_pt"] = records.file_entry(job_dir, model_pt) if model_pt.is_file() else None
    record["cache"] = {
        "hit": True,
        "from": origin,
        "served_from": str(source_dir),
        "saved_s": saved,
        "how": " and ".join(sorted(how)) or "nothing to bring",
    }
    return [
        f"neffbench: served from the cache: an identical compile already succeeded in {origin} "
        f"({saved:.1f} s saved); its products were brought here by {record['cache']['how']}, and no worker ran."
        if isinstance(saved, (int, float))
        else f"neffbench: served from the cache of {origin}; no worker ran."
    ]
