"""Read one job.json from disk into its :class:`JobView`, defensively: any file at all may be named job.json."""

from __future__ import annotations

import json
import os

from neffbench.views.fields import RecordError
from neffbench.views.job import JobView

__all__ = ["MAX_JOB_BYTES", "RecordError", "read_job"]

# A job record is a few KiB; a bigger file named job.json is something else, and reading it whole could stall.
MAX_JOB_BYTES = 4 << 20


def read_job(path: str | os.PathLike[str]) -> JobView:
    """The view of the job.json at ``path``; ``RecordError`` says in a sentence why it is no job record
    (unreadable, too large, not JSON, not an object, or from a newer schema). Wrong field types read as None."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_JOB_BYTES + 1)
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_JOB_BYTES:
        raise RecordError(f"{path} is larger than {MAX_JOB_BYTES} bytes: not a job record")
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{path} is not valid JSON: {exc}") from None
    return JobView.of(doc, str(path), path=str(path))
