"""What the Numerics view reads from a compare's document, with no Qt: each tap's figures, where they sit on a
log axis, the job's earlier compares, a tap's source line and its values for the histograms."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from neffbench.numerics import kept
from neffbench.numerics.kept import COMPARES_DIR
from neffbench.runs import arrays
from neffbench.taps.compare import NOT_COMPARED, REFERENCES, as_float64
from neffbench.taps.report import CPU_RUN, short_source
from neffbench.words import plural

LABELS = {"vs_eager": "against eager", "vs_float64": "against float64"}
MODULE_CHARS = 18  # a module path on the chart's axis keeps its last this many characters (the tip has it whole)
# A log axis has no room for 0 (an exact tap) or infinity: they are drawn this far past the finite figures.
CLAMP_DECADES = 1.0
FLOOR_WHEN_ALL_EXACT = 1e-3  # every tap exact: the floor a decade under this, the tolerance line above


def number(value: Any) -> float | None:
    """A figure of the document as a float: JSON keeps infinities as "inf" and "-inf"; None stays None."""
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def times_tolerance(tap: dict[str, Any], reference: str) -> float | None:
    figures = tap.get(reference)
    return number(figures.get("times_tolerance")) if isinstance(figures, dict) else None


def verdict_of(figures: Any) -> bool | None:
    """A tap's verdict against one reference: True within, False over, None not compared (no figures, or nothing
    to compare it with: a compare kept before that was said so recorded it as a failure)."""
    if not isinstance(figures, dict) or figures.get("problem") in NOT_COMPARED:
        return None
    ok = figures.get("ok")
    return None if ok is None else bool(ok)


def measured(document: dict[str, Any] | None) -> str:
    """What the compare set against the references, as the tab names it: ``device``, ``CPU`` (a run on the cpu
    runtime is never a device's), or ``the CPU run`` (the eager run itself, when there was no device output)."""
    document = document or {}
    if document.get("measured") == "eager":
        return CPU_RUN
    return "CPU" if document.get("runtime") == "cpu" else "device"


def no_device_output(document: dict[str, Any] | None) -> str | None:
    """``cannot compare against eager: no device output on this host (...)`` for a compare that had none (also one
    kept before a compare said so: every tap's problem then was "no device output"), else None."""
    document = document or {}
    if document.get("measured") == "eager":
        return f"cannot compare against eager: {(document.get('skipped') or {}).get('vs_eager')}"
    taps = document.get("taps") or []
    if taps and all((t.get("vs_eager") or {}).get("problem") == NOT_COMPARED[0] for t in taps):
        return "cannot compare against eager: there was no device output to compare"
    return None


def where(tap: dict[str, Any]) -> str | None:
    """The tap's line to show: the user's own call of a library module (``called_at``), else its class's forward."""
    return tap.get("called_at") or tap.get("source")


def axis_label(module: str, chars: int = MODULE_CHARS) -> str:
    """A module path short enough for the chart's axis: its tail, which tells it from its neighbours."""
    return module if len(module) <= chars else "…" + module[-(chars - 1) :]


@dataclass
class Plotted:
    """One reference's curve on a log axis: y per tap (NaN where there is no figure), and which were clamped."""

    y: np.ndarray
    exact: np.ndarray  # 0: drawn at the floor
    infinite: np.ndarray  # inf, or a tap with no figure (a problem): drawn at the ceiling
    floor: float
    ceiling: float


def bounds(values: list[float | None]) -> tuple[float, float]:
    """The floor and ceiling of the axis: a decade past the smallest and largest finite, non-zero figures
    (and the tolerance, 1, always inside)."""
    finite = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    lo = min(min(finite) if finite else FLOOR_WHEN_ALL_EXACT, 1.0)
    hi = max([*finite, 1.0])
    return lo / 10**CLAMP_DECADES, hi * 10**CLAMP_DECADES


def plotted(taps: list[dict[str, Any]], reference: str, floor: float, ceiling: float) -> Plotted:
    """A tap not compared (nothing to compare it with) has no point: nothing is known of it, so it is no failure."""
    raw = [times_tolerance(t, reference) for t in taps]
    problem = [verdict_of(t.get(reference)) is False and bool(t[reference].get("problem")) for t in taps]
    y = np.full(len(taps), np.nan)
    exact = np.zeros(len(taps), dtype=bool)
    infinite = np.zeros(len(taps), dtype=bool)
    for i, value in enumerate(raw):
        if value is None:
            if problem[i]:  # no figure because the tap could not be compared: a failure, at the top
                y[i], infinite[i] = ceiling, True
        elif value <= 0:
            y[i], exact[i] = floor, True
        elif not math.isfinite(value):
            y[i], infinite[i] = ceiling, True
        else:
            y[i] = value
    return Plotted(y, exact, infinite, floor, ceiling)


def clamp_note(curves: list[Plotted]) -> str:
    """What the axis cannot show, in words (or nothing)."""
    exact = any(c.exact.any() for c in curves)
    infinite = any(c.infinite.any() for c in curves)
    parts = []
    if exact:
        parts.append(f"hollow points at {curves[0].floor:.0e} are exact (0 error: a log axis has no 0)")
    if infinite:
        parts.append(
            f"crosses at {curves[0].ceiling:.0e} are infinitely many times the tolerance, or taps with no figure"
        )
    return "; ".join(parts).capitalize() + "." if parts else ""


def all_values(documents: list[dict[str, Any]]) -> list[float | None]:
    return [times_tolerance(t, r) for d in documents for t in d.get("taps") or [] for r in REFERENCES]


def overlay_positions(primary: dict[str, Any], other: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """Where ``other``'s taps sit on ``primary``'s x axis (matched by module path): its indices, the x of each,
    and how many of its taps have no match."""
    where = {t.get("module"): i for i, t in enumerate(primary.get("taps") or [])}
    mine, xs = [], []
    for j, tap in enumerate(other.get("taps") or []):
        if tap.get("module") in where:
            mine.append(j)
            xs.append(where[tap["module"]])
    return np.asarray(mine, dtype=int), np.asarray(xs, dtype=float), len(other.get("taps") or []) - len(mine)


def first_index(document: dict[str, Any], reference: str) -> int | None:
    """The first divergent tap's index; none when that tap was not compared (an older compare named one)."""
    name = (document.get("first_divergent") or {}).get(reference)
    taps = document.get("taps") or []
    index = next((i for i, t in enumerate(taps) if t.get("name") == name), None)
    return index if index is not None and verdict_of(taps[index].get(reference)) is False else None


# ---- the job's compares ----


@dataclass(frozen=True)
class Kept:
    """One compare kept in JOB/compares/."""

    path: Path
    label: str
    document: dict[str, Any] | None
    error: str | None = None


def describe(document: dict[str, Any]) -> str:
    """``2026-12-02 03:00 · cpu · 29 taps (depth 3) · float64: layers.2.cast``."""
    created = str(document.get("created") or "?").replace("T", " ")[:16]
    taps = document.get("taps") or []
    how = ", ".join(document.get("patterns") or []) or (
        f"depth {document['depth']}" if document.get("depth") else "default"
    )
    firsts = []
    for reference in REFERENCES:
        index = first_index(document, reference)
        if index is not None:
            firsts.append(f"{reference[3:]}: {taps[index].get('module')}")
    cannot = no_device_output(document)
    diverges = " · " + ", ".join(firsts) if firsts else (" · no device output" if cannot else " · all within")
    return f"{created} · {document.get('runtime') or '?'} · {plural(len(taps), 'tap')} ({how}){diverges}"


def kept_compares(job_dir: str | Path, prefix: str = "") -> list[Kept]:
    """The job's compares, newest first, labelled; one that cannot be read is listed with why."""
    return [
        Kept(k.path, prefix + describe(k.document), k.document)
        if k.document is not None
        else Kept(k.path, f"{k.path.name} (unreadable)", None, k.error)
        for k in kept.kept_compares(job_dir)
    ]


@dataclass(frozen=True)
class Scan:
    """What the view shows of a job before any compare: a line about it, its compares, and the compares of the
    other jobs in its workdir (to overlay: another compile's options, say ``--auto-cast matmult``)."""

    job_dir: Path
    summary: str
    kept: list[Kept]
    others: list[Kept]


def scan(job_dir: str | Path) -> Scan:
    """Read off the GUI thread."""
    from neffbench.views.job import RecordError
    from neffbench.views.job_file import read_job

    job_dir = Path(job_dir)
    try:
        job = read_job(job_dir / "job.json")
        auto_cast = (job.compiler or {}).get("auto_cast") or ((job.spec or {}).get("compiler") or {}).get("auto_cast")
        parts = [f"<b>Job</b> {escape(job.job_id or job_dir.name)}", f"<b>Backend</b> {escape(job.backend or '?')}"]
        if auto_cast:
            parts.append(f"<b>auto-cast</b> {escape(str(auto_cast))}")
        if job.outcome != "succeeded":
            parts.append(f"<b>Outcome</b> {escape(job.outcome or '?')}")
        summary = " &nbsp;·&nbsp; ".join(parts)
    except RecordError as exc:  # the summary is rich text: the sentence escaped
        summary = escape(f"{job_dir} cannot be compared: {exc}")
    others: list[Kept] = []
    for sibling in sorted(job_dir.parent.glob(f"*/{COMPARES_DIR}")) if job_dir.parent.is_dir() else []:
        if sibling.parent != job_dir:
            others += kept_compares(sibling.parent, prefix=f"{sibling.parent.name} · ")
    return Scan(job_dir, summary, kept_compares(job_dir), [k for k in others if k.document is not None])


# ---- one tap ----


def source_text(source: str | None) -> tuple[str, str | None]:
    """``model.py:41`` (the full FILE:LINE when shorter is ambiguous is in the tooltip) and the line itself,
    read from the file when it is there (None when not)."""
    if not source:
        return "no source recorded", None
    file, _, line = source.rpartition(":")
    try:
        number_ = int(line)
        lines = Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
        text = lines[number_ - 1].strip() if 0 < number_ <= len(lines) else None
    except (OSError, ValueError):
        text = None
    return short_source(source) or source, text


@dataclass
class Values:
    """A tap's measured values (the device's, or the CPU's) and a reference's, flattened in float64, for its
    histograms; ``measured`` names the first as the tab does."""

    device: np.ndarray
    reference: np.ndarray
    reference_name: str
    measured: str = "device"


def _member(path: str, names: list[str]) -> np.ndarray:
    loaded = arrays.load(path)
    for name in names:
        if name in loaded.arrays:
            return as_float64(loaded.arrays[name], loaded.dtypes.get(name)).ravel()
    raise arrays.ArraysError(f"{path} holds none of {', '.join(names)}")


def tap_values(document: dict[str, Any], tap: dict[str, Any], reference: str) -> Values:
    """Read off the GUI thread: the arrays the figures were computed from (``files`` and ``outputs``)."""
    files = document.get("files") or {}
    output = (document.get("outputs") or {}).get(tap["name"])
    key = "eager" if reference == "vs_eager" else "float64"
    if not files.get(key) and reference in (document.get("skipped") or {}):
        raise arrays.ArraysError(f"this compare has no {key} reference: {document['skipped'][reference]}")
    # Without device output, the eager run itself is what was set against float64.
    source = "eager" if document.get("measured") == "eager" else "device"
    if not files.get(source) or not output or not files.get(key):
        raise arrays.ArraysError("this compare names no arrays (it was kept before compares did)")
    device = _member(files[source], [output])
    # The float64 archive is keyed by tap name; the eager one as the NEFF's outputs.
    ref = _member(files[key], [tap["name"], output] if key == "float64" else [output, tap["name"]])
    label = measured(document)
    if ref.shape != device.shape:
        raise arrays.ArraysError(f"the {label} output has {device.size} values, the {key} reference {ref.size}")
    return Values(device, ref, key, label)


def histogram(values: np.ndarray, bins: int | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Counts and edges of the finite values (an empty or constant set still gets a visible bar)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.zeros(1), np.array([0.0, 1.0])
    if bins is None:
        bins = bin_count(finite.size)
    if isinstance(bins, int) and finite.min() == finite.max():
        centre = float(finite[0])
        half = abs(centre) * 0.05 or 1e-12
        bins = np.array([centre - half, centre + half])
    counts, edges = np.histogram(finite, bins=bins)
    return counts.astype(float), edges


def bin_count(size: int) -> int:
    """About the square root of the count: 16 values get 5 bins, a million get 80."""
    return int(min(80, max(5, round(math.sqrt(size)))))


def shared_edges(*sets: np.ndarray) -> np.ndarray:
    together = np.concatenate([s[np.isfinite(s)] for s in sets]) if sets else np.zeros(0)
    if together.size == 0:
        return np.array([0.0, 1.0])
    bins = bin_count(max(s.size for s in sets))
    lo, hi = float(together.min()), float(together.max())
    if lo == hi:
        half = abs(lo) * 0.05 or 1e-12
        lo, hi = lo - half, hi + half
    return np.linspace(lo, hi, bins + 1)
