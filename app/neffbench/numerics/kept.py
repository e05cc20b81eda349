"""The compares kept in ``JOB/compares/``: one JSON document each, named by when it was made, read newest first."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPARES_DIR = "compares"


@dataclass(frozen=True)
class KeptCompare:
    path: Path
    document: dict[str, Any] | None  # None: unreadable, and ``error`` says why
    error: str | None = None


def kept_compares(job_dir: str | Path) -> list[KeptCompare]:
    """The job's compares, newest first; one that cannot be read is listed with why."""
    folder = Path(job_dir) / COMPARES_DIR
    out: list[KeptCompare] = []
    for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(document, dict) or not isinstance(document.get("taps"), list):
                raise ValueError("not a compare's document")
        except (OSError, ValueError) as exc:
            out.append(KeptCompare(path, None, f"Cannot read {path}: {exc}"))
            continue
        out.append(KeptCompare(path, document))
    return out


def latest_compare(job_dir: str | Path) -> KeptCompare | None:
    """The newest readable compare of the job, if any."""
    return next((k for k in kept_compares(job_dir) if k.document is not None), None)
