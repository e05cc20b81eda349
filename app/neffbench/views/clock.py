"""The UTC timestamps every record writes, in the compiler's own format."""

from __future__ import annotations

import datetime as _dt


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def iso(when: _dt.datetime | None = None) -> str:
    """ISO 8601 UTC with milliseconds and a Z, as the compiler writes its own timestamps."""
    return (when or utc_now()).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
