"""A job record read: a frozen, typed view of ``job.json``, built in one place that knows every older layout.

Writing stays with the dict the runner keeps (records.py, record_start.py, record_events.py, finish.py);
whatever reads a record takes it through :meth:`JobView.of`, so the fallbacks for job directories written
by earlier versions (no ``bucket``, only ``num_tokens``; no ``kernel``; no ``schema_version``) live here
and nowhere else. A record from a newer ``schema_version`` than this code knows is refused with a sentence
saying so: reading it as if it were ours could show a NEFF, numerics or a verdict it does not mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neffbench.backends import registry as backends
from neffbench.backends.base import Backend

SCHEMA_VERSION = 1


class RecordError(ValueError):
    """A job record that cannot be read as one; the message says why in a sentence."""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class JobView:
    """What a job record says; a field the record lacks (or holds with the wrong type) is None or empty."""

    schema_version: int
    job_id: str | None
    name: str | None
    kernel: str | None
    bucket: dict[str, Any]
    outcome: str | None
    reason: str | None
    created: str | None
    duration_s: float | None
    stage: str | None
    backend: str | None
    backend_reason: str | None
    neffs: tuple[dict[str, Any], ...]
    neff_note: str | None
    model_pt: dict[str, Any] | None
    numerics: dict[str, Any] | None
    metrics: dict[str, Any]
    warnings: tuple[str, ...]
    error: dict[str, Any] | None
    cache: dict[str, Any]
    compiler: dict[str, Any]
    spec_hash: str | None
    # The whole document as written, for what no field above names (a detail view shows all of it).
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, record: JobView | Mapping[str, Any], where: str = "job.json") -> JobView:
        """The view of ``record`` (a view passes through); RecordError for one from a newer schema."""
        if isinstance(record, JobView):
            return record
        if not isinstance(record, Mapping):
            raise RecordError(f"{where} holds a JSON {type(record).__name__}, not a job record object")
        version = record.get("schema_version")
        # Records before the field existed are the first layout.
        version = version if isinstance(version, int) and not isinstance(version, bool) else 1
        if version > SCHEMA_VERSION:
            raise RecordError(
                f"{where} has schema_version {version}, newer than this neffbench reads (up to "
                f"{SCHEMA_VERSION}): it was written by a newer neffbench, which is needed to read it"
            )
        bucket = record.get("bucket")
        if not isinstance(bucket, dict):  # records written before kernels existed have only num_tokens
            bucket = {"num_tokens": record["num_tokens"]} if record.get("num_tokens") is not None else {}
        neffs = _list(record.get("neffs"))
        warnings = _list(record.get("warnings"))
        return cls(
            schema_version=version,
            job_id=_text(record.get("job_id")),
            name=_text(record.get("name")),
            kernel=_text(record.get("kernel")),
            bucket=bucket,
            outcome=_text(record.get("outcome")),
            reason=_text(record.get("reason")),
            created=_text(record.get("created")),
            duration_s=_number(record.get("duration_s")),
            stage=_text(record.get("stage")),
            backend=_text(record.get("backend")),
            backend_reason=_text(record.get("backend_reason")),
            neffs=tuple(n for n in neffs if isinstance(n, dict)),
            neff_note=_text(record.get("neff_note")),
            model_pt=record.get("model_pt") if isinstance(record.get("model_pt"), dict) else None,
            numerics=record.get("numerics") if isinstance(record.get("numerics"), dict) else None,
            metrics=_dict(record.get("metrics")),
            warnings=tuple(str(w) for w in warnings),
            error=record.get("error") if isinstance(record.get("error"), dict) else None,
            cache=_dict(record.get("cache")),
            compiler=_dict(record.get("compiler")),
            spec_hash=_text(record.get("spec_hash")),
            raw=record,
        )

    @property
    def backend_class(self) -> type[Backend] | None:
        """The class of the backend that compiled it; None before the worker said (or for a name unknown here)."""
        return backends.recorded(self.backend)

    @property
    def no_neff_by_design(self) -> bool:
        """Whether its backend makes no NEFF at all (cpu-check), so a missing NEFF is no failure's sign."""
        cls = self.backend_class
        return cls is not None and not cls.makes_neff

    @property
    def cache_hit(self) -> bool:
        return bool(self.cache.get("hit"))


def bucket_of(record: JobView | Mapping[str, Any]) -> dict[str, Any]:
    """A record's bucket (records written before kernels existed have only ``num_tokens``)."""
    return JobView.of(record).bucket
