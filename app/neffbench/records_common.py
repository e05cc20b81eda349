"""What job and run records share, below both ``jobs/`` and ``runs/``: their UTC timestamps and a record's bucket."""

from __future__ import annotations

import datetime as _dt
from typing import Any


def bucket_of(record: dict[str, Any]) -> dict[str, Any]:
    """A record's bucket; records written before kernels existed have only ``num_tokens``."""
    bucket = record.get("bucket")
    if isinstance(bucket, dict):
        return bucket
    return {"num_tokens": record["num_tokens"]} if record.get("num_tokens") is not None else {}


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def iso(when: _dt.datetime | None = None) -> str:
    """ISO 8601 UTC with milliseconds and a Z, as the compiler writes its own timestamps."""
    return (when or utc_now()).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
