"""A compare of taps in words and as the ``--json`` document: each tap's figures and the first that diverges."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from neffbench.taps.compare import REFERENCES, Comparison, TapResult, measure, tolerance
from neffbench.taps.select import Tap

CAVEAT = (
    "Taps can change what the compiler fuses: a tapped boundary cannot be fused across, so the tapped "
    "variant is not exactly the graph the job ships."
)
_LABELS = {"vs_eager": "against eager", "vs_float64": "against float64"}
# What a compare's verdict is, for a script (``neffbench compare``'s exit status) and the window.
WITHIN, DIVERGENT, NOT_COMPARED = "within tolerance", "divergent", "could not compare"
CPU_RUN = "the CPU run"  # what is set against float64 when the runtime gave no output of the taps


def column(comparison: Comparison, reference: str) -> str:
    """A reference's column heading: ``against float64``, or ``CPU run against float64`` when the eager run on
    this CPU, not a device's, is what it is set against."""
    return ("CPU run " if comparison.measured == "eager" and reference == "vs_float64" else "") + _LABELS[reference]


def short_source(source: str | None) -> str | None:
    """``model.py:41`` of ``/home/me/model.py:41``."""
    if not source:
        return None
    file, _, line = source.rpartition(":")
    return f"{Path(file).name}:{line}" if file else source


def _times(value: float | None) -> str:
    if value is None:
        return "?"
    if math.isinf(value):
        return "infinitely many times"
    return f"{value:.3g}x"


def first_divergent_line(comparison: Comparison, reference: str) -> str:
    """``first divergent against float64: `layers.3.mlp` (model.py:41), 38x the tolerance; every tap before
    it is within.``, or that every tap is within, or why the reference was not compared."""
    label = _LABELS[reference]
    cpu = comparison.measured == "eager"
    if reference in comparison.skipped:
        if reference == "vs_eager" and cpu:
            return f"cannot compare {label}: {comparison.skipped[reference]}"
        return f"{label}: not compared ({comparison.skipped[reference]})"
    results = comparison.results.get(reference, [])
    first = comparison.first_divergent(reference)
    if first is None:
        compared = sum(r.ok is not None for r in results)
        whose = f"{CPU_RUN} {label}" if cpu else label
        if compared == len(results):
            return f"{whose}: every tap ({len(results)}) is within its dtype's tolerance."
        return (
            f"{whose}: every tap compared ({compared} of {len(results)}) is within its dtype's tolerance; "
            f"{len(results) - compared} had no output to compare."
        )
    tap = next(t for t in comparison.taps if t.name == first.name)
    where = f"`{tap.module}`" + (f" ({short_source(tap.where)})" if tap.where else "")
    what = first.problem or f"{_times(first.times_tolerance)} the {first.dtype} tolerance"
    index = results.index(first)
    before = "it is the first tap" if index == 0 else "every tap before it is within"
    if any(r.ok is None for r in results[:index]):
        before = "every tap compared before it is within"
    return f"first divergent {'of ' + CPU_RUN + ' ' if cpu else ''}{label}: {where}, {what}; {before}."


def summary(comparison: Comparison) -> list[str]:
    """The first divergent tap per reference (or why it was not compared), what could not be compared first: the
    figures after it are not the ones asked for."""
    said = [first_divergent_line(comparison, r) for r in REFERENCES]
    return sorted(said, key=lambda line: not line.startswith("cannot compare"))


def verdict(comparison: Comparison) -> str:
    """``divergent`` when a tap is over tolerance; ``could not compare`` when the device's outputs were not there
    to compare (not at all, or of some taps); else ``within tolerance``. A compare against eager that could not be
    made is no answer, whatever the CPU run's own figures against float64 say."""
    if "vs_eager" in comparison.skipped:
        return NOT_COMPARED
    if any(comparison.first_divergent(r) is not None for r in REFERENCES):
        return DIVERGENT
    if any(r.ok is None for r in comparison.results.get("vs_eager", [])):
        return NOT_COMPARED
    return WITHIN


def _cell(result: TapResult | None, skipped: bool = False) -> str:
    if result is None:
        return "not compared" if skipped else "-"
    if result.problem:
        return result.problem
    said = "ok" if result.ok else "FAIL"
    # only a jump is worth a column's attention: where the error grows, not where it stays as it was
    growth = f" grew x{result.growth:.3g}" if result.growth is not None and result.growth > 2 else ""
    nonfinite = f" nan={result.nan}" if result.nan else ""
    nonfinite += f" inf={result.inf}" if result.inf else ""
    return (
        f"{said} abs={result.max_abs:.3g} share={result.scale_share:.3g} cos={_cos(result.cosine)}"
        f" {_times(result.times_tolerance)} tol{growth}{nonfinite}"
    )


def _cos(value: float | None) -> str:
    return "?" if value is None else f"{value:.6f}"


def lines(comparison: Comparison, note: str | None = None) -> list[str]:
    """The text report: a row per tap in execution order, the first divergent tap per reference, the caveat."""
    rows = [("tap", "module", "source", "dtype", "shape", *(column(comparison, r) for r in REFERENCES))]
    by_ref = {r: {x.name: x for x in comparison.results.get(r, [])} for r in REFERENCES}
    for tap in comparison.taps:
        cells = [_cell(by_ref[r].get(tap.name), r in comparison.skipped) for r in REFERENCES]
        rows.append((tap.name, tap.module, short_source(tap.where) or "?", tap.dtype, str(list(tap.shape)), *cells))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in rows]
    out.append("")
    out += summary(comparison)
    if note:
        out.append(note)
    out.append(CAVEAT)
    return out


def _figures(result: TapResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    data = result.as_dict()
    for key, value in data.items():
        if isinstance(value, float) and not math.isfinite(value):
            # JSON has no infinity; "inf" still reads back with float()
            data[key] = None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return data


def document(
    comparison: Comparison, *, job: str, tapped_job: str | None, runtime: str | None, **extra: Any
) -> dict[str, Any]:
    """The ``--json`` document: ``{"job", "taps": [...], "first_divergent", "tapped_job", "runtime"}`` (and
    ``extra``, the caller's own keys, plus ``verdict``, ``measured``, ``summary`` (the first divergent tap per
    reference, or why it was not compared, in words), ``caveat`` and ``skipped``)."""
    by_ref = {r: {x.name: x for x in comparison.results.get(r, [])} for r in REFERENCES}
    taps = []
    for tap in comparison.taps:
        entry: dict[str, Any] = tap.to_dict()
        for reference in REFERENCES:
            entry[reference] = _figures(by_ref[reference].get(tap.name))
        taps.append(entry)
    firsts = {r: (x.name if (x := comparison.first_divergent(r)) else None) for r in REFERENCES}
    return {
        "job": job,
        "taps": taps,
        "first_divergent": firsts,
        "tapped_job": tapped_job,
        "runtime": runtime,
        "verdict": verdict(comparison),
        "measured": comparison.measured,
        "summary": summary(comparison),
        "skipped": dict(comparison.skipped),
        "caveat": CAVEAT,
        **extra,
    }


def taps_changed_result(original_output: Any, tapped_final_output: Any, dtype: str) -> str | None:
    """A sentence when the tapped variant's own outputs differ from the original job's beyond ``dtype``'s
    tolerance (the taps changed what the compiler made), else None. Either may be one output or a sequence."""
    got, want = _as_list(tapped_final_output), _as_list(original_output)
    if len(got) != len(want):
        return f"the taps changed the result: the tapped variant returns {len(got)} outputs before its taps, the job {len(want)}."
    worst: TapResult | None = None
    for i, (a, b) in enumerate(zip(got, want)):
        result = measure(Tap(f"output{i}", f"output{i}", "", None, dtype, ()), a, b)
        if not result.ok and (worst is None or (result.times_tolerance or 0) >= (worst.times_tolerance or 0)):
            worst = result
    if worst is None:
        return None
    atol, rtol = tolerance(dtype)
    how = worst.problem or (
        f"by up to {worst.max_abs:.3g} ({_times(worst.times_tolerance)} the {dtype} tolerance, "
        f"atol {atol:g} + rtol {rtol:g})"
    )
    return (
        f"the taps changed the result: the tapped variant's {worst.name} differs from the original job's {how}; "
        "the figures describe the tapped graph, which the compiler fused differently."
    )


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]
