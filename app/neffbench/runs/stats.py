"""Latency statistics from every timed iteration, and throughput from what one call processes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def summarize(durations_ms: Sequence[float], items_per_call: int = 1) -> dict[str, Any]:
    """mean, min, max, std, p50, p90, p99 in ms; items per second from the mean."""
    d = np.asarray(list(durations_ms), dtype=np.float64)
    if d.size == 0:
        return {"iterations": 0}
    mean = float(d.mean())
    return {
        "iterations": int(d.size),
        "mean_ms": mean,
        "min_ms": float(d.min()),
        "max_ms": float(d.max()),
        "std_ms": float(d.std()),
        "p50_ms": float(np.percentile(d, 50)),
        "p90_ms": float(np.percentile(d, 90)),
        "p99_ms": float(np.percentile(d, 99)),
        "items_per_call": items_per_call,
        "items_per_s": items_per_call / (mean / 1e3) if mean > 0 else None,
    }
