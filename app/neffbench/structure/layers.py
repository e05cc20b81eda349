"""A job's structure with the latest compare's error and the latest profile's device time laid on each layer.

Errors come from ``JOB/compares/`` (``neffbench compare``): a tap is a module path, so each tap's figures against
eager and float64 are its module's, and the compare's first divergent tap is marked on its module. Times come from
the newest run of the job that kept a processed profile (``neffbench run JOB --profile``: ``RUN_DIR/profile.json``):
each framework operation mapped to its module (:mod:`neffbench.structure.profile_map`), each module's time the
merged time under it, its share of the profile's own ``total_time``; its FLOPs over that time against the target's
documented peak (:mod:`neffbench.structure.peaks`). Every figure says where it came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.numerics.kept import latest_compare
from neffbench.structure import document, peaks, profile_map
from neffbench.structure.document import Node, Structure
from neffbench.views.fields import as_dict, as_list, number, text
from neffbench.views.job import JobView

REFERENCES = ("vs_eager", "vs_float64")
RUNS_DIR = "runs"
# Whole-NEFF figures of a profile's Summary shown beside the tree (fractions of 1 for the *_percent ones).
WHOLE = (
    "total_time",
    "total_active_time_percent",
    "tensor_engine_active_time_percent",
    "vector_engine_active_time_percent",
    "scalar_engine_active_time_percent",
    "gpsimd_engine_active_time_percent",
    "sync_engine_active_time_percent",
    "dma_active_time_percent",
    "mfu_estimated_percent",
    "hfu_estimated_percent",
    "hbm_read_bytes",
    "hbm_write_bytes",
)


@dataclass(frozen=True)
class Time:
    """A module's device time in one profile, and what it did in it."""

    seconds: float
    share: float | None  # of the profile's total_time
    instructions: Mapping[str, int]
    hbm_bytes: int
    sbuf_bytes: int
    operations: int
    flops_per_s: float | None  # the module's FLOPs (FlopCounterMode) over its time
    peak_share: float | None  # of the target's documented peak


@dataclass(frozen=True)
class Layer:
    node: Node
    vs_eager: Mapping[str, Any] | None = None  # the compare's figures of the tap at this module
    vs_float64: Mapping[str, Any] | None = None
    tap: str | None = None
    first_divergent: tuple[str, ...] = ()  # the references it is the first divergent tap against
    time: Time | None = None

    def error(self, reference: str) -> Mapping[str, Any] | None:
        return self.vs_eager if reference == "vs_eager" else self.vs_float64


@dataclass(frozen=True)
class CompareSource:
    path: Path
    created: str | None
    runtime: str | None
    measured: str | None
    verdict: str | None
    first_divergent: Mapping[str, str | None]  # by reference: the module path


@dataclass(frozen=True)
class ProfileSource:
    path: Path  # the processed profile (RUN_DIR/profile.json)
    run: Path | None  # the run record
    neff: str | None
    tool: str | None
    tool_version: str | None
    source: str | None  # parquet, summary-json, json
    whole: Mapping[str, Any]
    metadata: Mapping[str, Any]
    unmapped: tuple[str, ...]  # framework names below no module of the tree
    peak: peaks.Peak | None

    @property
    def total_s(self) -> float | None:
        return number(self.whole.get("total_time"))

    def words(self) -> str:
        """Which profile every time figure comes from."""
        version = str(self.tool_version or as_dict(self.metadata).get("explorer_version") or "")
        tool = (
            version if self.tool and version.startswith(self.tool) else " ".join(p for p in (self.tool, version) if p)
        )
        run = f"run {self.run.stem}" if self.run else "a run"
        return f"{run}, NEFF {_neff_words(self.neff)}, {tool or 'the profiler'}, read from {self.source}"


def _neff_words(neff: str | None) -> str:
    """``graph.neff of lossy-profiled-...``: the file and the job it belongs to."""
    if not neff:
        return "?"
    path = Path(neff)
    job = next((p.name for p in path.parents if (p / "job.json").is_file()), None)
    return f"{path.name} of {job}" if job else str(path)


@dataclass(frozen=True)
class Laid:
    structure: Structure
    layers: Mapping[str, Layer]
    compare: CompareSource | None = None
    profile: ProfileSource | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def layer(self, path: str) -> Layer:
        return self.layers[path]


def _compare(job_dir: Path, structure: Structure) -> tuple[dict[str, dict[str, Any]], CompareSource | None]:
    kept = latest_compare(job_dir)
    if kept is None or kept.document is None:
        return {}, None
    doc = kept.document
    by_path: dict[str, dict[str, Any]] = {}
    names: dict[str, str] = {}
    for tap in as_list(doc.get("taps")):
        tap = as_dict(tap)
        module = text(tap.get("module"))
        if module is not None:
            # A module without submodules is tapped at its outputs ("(output 0)"): the root's figures.
            path = "" if module.startswith("(output") else module
            by_path.setdefault(path, tap)
            names[str(tap.get("name"))] = path
    firsts = as_dict(doc.get("first_divergent"))
    source = CompareSource(
        path=kept.path,
        created=text(doc.get("created")),
        runtime=text(doc.get("runtime")),
        measured=text(doc.get("measured")),
        verdict=text(doc.get("verdict")),
        first_divergent={r: names.get(str(firsts.get(r))) if firsts.get(r) else None for r in REFERENCES},
    )
    return by_path, source


def latest_profile(job_dir: Path) -> tuple[dict[str, Any], Path, Path | None] | None:
    """The newest processed profile of the job's runs: (its document, its path, the run record's path)."""
    folder = job_dir / RUNS_DIR
    for record_path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        processed = text(as_dict(as_dict(record).get("profile")).get("processed"))
        if not processed or not Path(processed).is_file():
            continue
        try:
            data = json.loads(Path(processed).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data, Path(processed), record_path
    return None


def _profile(
    job_dir: Path, structure: Structure, job: JobView | None
) -> tuple[dict[str, Time], ProfileSource | None, list[str]]:
    found = latest_profile(job_dir)
    if found is None:
        return {}, None, []
    data, path, run = found
    whole = as_dict(data.get("summary"))
    spec = as_dict(job.spec if job else None)
    compiler = as_dict(spec.get("compiler"))
    dtype = structure.inputs[0].dtype if structure.inputs else None
    peak = peaks.peak(
        text(compiler.get("target")), compiler.get("lnc") if isinstance(compiler.get("lnc"), int) else None, dtype
    )
    figures, unmapped = profile_map.lay(structure, [as_dict(r) for r in as_list(data.get("framework"))])
    total = number(whole.get("total_time"))
    times: dict[str, Time] = {}
    for path_, fig in figures.items():
        node = structure.node(path_)
        seconds = fig.busy_ns / 1e9
        achieved = node.flops / seconds if node is not None and node.flops and seconds > 0 else None
        times[path_] = Time(
            seconds=seconds,
            share=seconds / total if total else None,
            instructions=dict(fig.instructions),
            hbm_bytes=fig.hbm_bytes,
            sbuf_bytes=fig.sbuf_bytes,
            operations=fig.operations,
            flops_per_s=achieved,
            peak_share=peak.share(achieved) if peak is not None and achieved is not None else None,
        )
    source = ProfileSource(
        path=path,
        run=run,
        neff=text(data.get("neff")),
        tool=text(data.get("tool")),
        tool_version=text(data.get("tool_version")),
        source=text(data.get("source")),
        whole={k: whole.get(k) for k in WHOLE if k in whole},
        metadata=as_dict(data.get("metadata")),
        unmapped=tuple(unmapped),
        peak=peak,
    )
    notes = []
    if not as_list(data.get("framework")):
        notes.append(
            "the profile names no layer: it was read from "
            f"{source.source or 'a summary'}, or its NEFF was compiled without the framework's debug names"
        )
    elif unmapped:
        notes.append(
            f"{len(unmapped)} framework operation(s) of the profile map to no module below the root "
            f"(such as {unmapped[0]!r}); their time counts for the root only"
        )
    return times, source, notes


def lay(job_dir: str | Path, structure: Structure | None = None, job: JobView | None = None) -> Laid | None:
    """The job's structure with its latest compare and profile laid on it; None for a job without a structure."""
    folder = Path(job_dir)
    structure = structure if structure is not None else document.load(folder)
    if structure is None:
        return None
    errors, compare = _compare(folder, structure)
    times, profile, notes = _profile(folder, structure, job)
    firsts: dict[str, list[str]] = {}
    for reference, path in compare.first_divergent.items() if compare else ():
        if path is not None:
            firsts.setdefault(path, []).append(reference)
    layers = {}
    for node in structure.nodes:
        tap = errors.get(node.path)
        layers[node.path] = Layer(
            node=node,
            vs_eager=as_dict(tap.get("vs_eager")) or None if tap else None,
            vs_float64=as_dict(tap.get("vs_float64")) or None if tap else None,
            tap=text(tap.get("name")) if tap else None,
            first_divergent=tuple(firsts.get(node.path, ())),
            time=times.get(node.path),
        )
    return Laid(structure, layers, compare, profile, tuple(notes))
