"""Each point's figures at every layer of its model (device time, error against eager and float64), so a sweep can
set any one layer's time or error against the swept values: the job's structure laid with its latest compare and
profile, as ``neffbench structure`` shows it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neffbench.structure import cells, table
from neffbench.structure.document import StructureError
from neffbench.structure.layers import lay

FIGURES = ("time_s", "share", "vs_eager", "vs_float64")
ROOT = "(the whole model)"  # how the root's path ("") is written where a path is shown


def figures(job_dir: str | Path) -> dict[str, dict[str, float | None]]:
    """Module path -> its figures (None where unknown: not profiled, not compared); {} for a job without a structure
    (compiled before structures were kept, or one that could not be read)."""
    try:
        laid = lay(job_dir)
    except StructureError:
        return {}
    if laid is None:
        return {}
    out: dict[str, dict[str, float | None]] = {}
    for path, layer in laid.layers.items():
        out[path] = {
            "time_s": layer.time.seconds if layer.time else None,
            "share": layer.time.share if layer.time else None,
            "vs_eager": _max_abs(layer.vs_eager),
            "vs_float64": _max_abs(layer.vs_float64),
        }
    return out


def _max_abs(figures_: Any) -> float | None:
    value = (figures_ or {}).get("max_abs")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def attach(rows: Iterable[dict[str, Any]]) -> None:
    """Give each row of ``sweeps.rows`` its job's figures per layer (``row["layers"]``)."""
    for row in rows:
        row["layers"] = figures(row["job_dir"]) if row.get("job_dir") else {}


def paths(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Every module path any point has, in its model's call order (the first point that has it sets its place)."""
    return list(dict.fromkeys(p for row in rows for p in row.get("layers") or {}))


def figure(row: dict[str, Any], path: str, name: str) -> float | None:
    """One figure (one of :data:`FIGURES`) of the point's module ``path``; None when it has none."""
    return ((row.get("layers") or {}).get(path) or {}).get(name)


def shown(path: str) -> str:
    return path or ROOT


def path_of(written: str) -> str:
    """The module path a user wrote (``--layer``): the root as ``""``, its words or ``.``."""
    return "" if written in (ROOT, ".", "") else written


def table_lines(rows: list[dict[str, Any]], path: str) -> list[str]:
    """The module ``path`` of each point: its device time and share, and its error against eager and float64."""
    cells_ = [
        [
            str(row["point"]),
            str(row.get("label") or ""),
            cells.duration(figure(row, path, "time_s")) or "-",
            cells.percent(figure(row, path, "share")) or "-",
            *(_error(figure(row, path, r)) for r in ("vs_eager", "vs_float64")),
        ]
        for row in rows
    ]
    head = ["point", "label", "time", "share", "max abs vs eager", "max abs vs float64"]
    lines = [f"{shown(path)} in each point (device time from its latest profile, error from its latest compare):"]
    lines += table.aligned(head, cells_, [True, False, True, True, True, True])
    missing = [str(r["point"]) for r in rows if path not in (r.get("layers") or {})]
    if missing:
        lines.append(
            f"point(s) {', '.join(missing)}: no module {shown(path)!r} in the job's structure (or no structure yet: "
            "neffbench structure JOB computes one)"
        )
    return lines


def _error(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"
