"""Preview plots as plain data: a kernel says what to draw, the window and ``neffbench preview`` draw it.

Qt-free and torch-free (arrays are numpy or lists), so a kernel's preview can be computed in a
worker thread or a child process and drawn by whichever front end asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

KINDS = ("curve", "histogram", "bars")


@dataclass
class Series:
    """One curve, one histogram or one set of bars; ``x`` is the bin edges for a histogram (len(y) + 1)."""

    name: str
    x: Any
    y: Any
    # "data" for what the kernel computes; "reference" for what it is compared with (drawn dashed).
    role: str = "data"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "x": np.asarray(self.x).tolist(),
            "y": np.asarray(self.y).tolist(),
        }


@dataclass
class Plot:
    title: str
    kind: str
    x_label: str
    y_label: str
    series: list[Series]
    note: str = ""  # one sentence under the plot: what to look for
    log_y: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"plot kind must be one of {', '.join(KINDS)}; got {self.kind!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "kind": self.kind,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "note": self.note,
            "log_y": self.log_y,
            "series": [s.to_json() for s in self.series],
        }


@dataclass
class KernelPreview:
    """A kernel's preview: plots, and badges (short figures such as "max |err| 3e-7") with their verdicts."""

    title: str
    plots: list[Plot]
    badges: dict[str, str] = field(default_factory=dict)
    # Badge name -> True (good), False (bad) or None (informational).
    verdicts: dict[str, bool | None] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "badges": self.badges,
            "verdicts": self.verdicts,
            "timings_ms": {k: round(v * 1e3, 3) for k, v in self.timings.items()},
            "plots": [p.to_json() for p in self.plots],
        }


def histogram(name: str, values: Any, bins: int = 64, role: str = "data") -> Series:
    """A histogram series of finite values (NaN and Inf are counted by the statistics, not binned)."""
    data = np.asarray(values, dtype=np.float64).ravel()
    data = data[np.isfinite(data)]
    if data.size == 0:
        return Series(name, [0.0, 1.0], [0], role)
    lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(data, bins=bins, range=(lo, hi))
    return Series(name, edges, counts, role)


def stats(values: Any) -> dict[str, Any]:
    """min, max, mean, std and NaN/Inf counts of a tensor's values (as float64)."""
    data = np.asarray(values, dtype=np.float64).ravel()
    finite = data[np.isfinite(data)]
    out: dict[str, Any] = {"numel": int(data.size), "nan": int(np.isnan(data).sum()), "inf": int(np.isinf(data).sum())}
    if finite.size:
        out.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()), std=float(finite.std()))
    else:
        out.update(min=None, max=None, mean=None, std=None)
    return out


def same_bins(named: Sequence[tuple[str, Any]], bins: int = 64) -> list[Series]:
    """Histograms of several arrays over one common range, so they can be read against each other."""
    arrays = [np.asarray(v, dtype=np.float64).ravel() for _, v in named]
    finite = [a[np.isfinite(a)] for a in arrays]
    nonempty = [a for a in finite if a.size]
    if not nonempty:
        return [Series(n, [0.0, 1.0], [0]) for n, _ in named]
    lo = min(float(a.min()) for a in nonempty)
    hi = max(float(a.max()) for a in nonempty)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    out = []
    for (name, _), a in zip(named, finite):
        counts, edges = np.histogram(a, bins=bins, range=(lo, hi))
        out.append(Series(name, edges, counts))
    return out
