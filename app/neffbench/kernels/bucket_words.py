"""How a bucket reads in logs, sentences and tables: ``num_tokens=8``, ``8 tokens``, ``8``."""

from __future__ import annotations

from neffbench.kernels.api import Bucket
from neffbench.words import plural

# Bucket axes whose values read as a count in sentences and tables ("8 tokens"): a bucket of that axis
# alone is shown by its number.
COUNTED_AXES = {"num_tokens": "tokens"}
_SINGULAR = {"tokens": "token"}  # "1 token", not "1 tokens"


def bucket_label(bucket: Bucket | None) -> str:
    """``num_tokens=8`` or ``batch=1 seq=128``: how a bucket reads in logs and tables."""
    if not bucket:
        return "-"
    return " ".join(f"{k}={v}" for k, v in bucket.items())


def _counted(bucket: Bucket | None) -> tuple[str, int] | None:
    """(unit, count) for a bucket of one counted axis alone (``{"num_tokens": 8}``: ("tokens", 8))."""
    if bucket and len(bucket) == 1:
        ((axis, value),) = bucket.items()
        if axis in COUNTED_AXES:
            return COUNTED_AXES[axis], value
    return None


def buckets_text(buckets: list[dict[str, int]]) -> str:
    """``1, 8 tokens`` or ``batch=1 seq=128; batch=1 seq=512``."""
    if buckets == [{}]:
        return "no bucket axes"
    counted = [c for c in map(_counted, buckets) if c is not None]
    if buckets and len(counted) == len(buckets) and len({c[0] for c in counted}) == 1:
        unit = counted[0][0]
        one = len(counted) == 1 and counted[0][1] == 1
        return f"{', '.join(str(c[1]) for c in counted)} {_SINGULAR.get(unit, unit) if one else unit}"
    return "; ".join(bucket_label(b) for b in buckets)


def bucket_phrase(bucket: Bucket | None) -> str:
    """``8 tokens`` for the vLLM kernels, ``batch=1 seq=128`` otherwise: a bucket in a sentence."""
    counted = _counted(bucket)
    if not counted:
        return bucket_label(bucket)
    unit, n = counted
    return plural(n, _SINGULAR.get(unit, unit), unit)


def bucket_cell(bucket: Bucket | None) -> str:
    """A results table's bucket column: the count alone (``8``), else ``batch=1 seq=128`` (``?`` for none)."""
    counted = _counted(bucket)
    if counted:
        return str(counted[1])
    return bucket_label(bucket) if bucket else "?"


def items_unit(buckets: list[Bucket]) -> str | None:
    """What the items of throughput are when every bucket counts the same unit (``tokens``), else None."""
    units = {c[0] if c else None for c in map(_counted, buckets)}
    return units.pop() if len(units) == 1 else None
