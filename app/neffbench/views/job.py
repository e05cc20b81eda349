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
from pathlib import Path
from typing import Any

from neffbench.backends import registry as backends
from neffbench.backends.base import Backend
from neffbench.views.fields import (
    RecordError,
    as_dict,
    as_list,
    integer,
    mapping_of,
    maybe_dict,
    number,
    schema_version_of,
    text,
)

__all__ = ["LEGACY_BUCKET_FIELD", "SCHEMA_VERSION", "JobView", "RecordError", "bucket_of", "legacy_bucket_fields"]

SCHEMA_VERSION = 1
# Records written before kernels existed named their bucket by this one field; records and events still carry
# it beside ``bucket`` (None for a bucket without that axis), for what reads that layout.
LEGACY_BUCKET_FIELD = "num_tokens"


def legacy_bucket_fields(bucket: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level field of the layout before kernels, as a record or an event writes it beside ``bucket``."""
    return {LEGACY_BUCKET_FIELD: bucket.get(LEGACY_BUCKET_FIELD)}


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
    finished: str | None
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
    spec: dict[str, Any] | None
    makes_neff: bool | None
    compiler_command: dict[str, Any]
    stages: dict[str, Any]
    sources: dict[str, Any] | None
    weights: dict[str, Any]
    pid: int | None
    pid_start: Any
    cache_key: str | None = None
    versions: dict[str, Any] | None = None
    host: str | None = None
    exit_code: int | None = None
    torchneuron: dict[str, Any] = field(default_factory=dict)
    error_text: str | None = None  # the error of a record older than the error dict: a plain sentence
    # A compare's tapped job: what it was asked to tap and for which job ({"patterns", "depth", "of"}), and what
    # its worker tapped ({"taps": [...], "depth", "notes", "float64"}); empty for an ordinary job.
    taps_request: dict[str, Any] = field(default_factory=dict)
    taps: dict[str, Any] = field(default_factory=dict)
    # A profiled variant: compiled with the framework's debug names for the job it names ({"of"}); empty otherwise.
    profiled_request: dict[str, Any] = field(default_factory=dict)
    # The job.json it was read from (views/job_file.py sets it); None for a record handed over in memory.
    path: str | None = None
    # The whole document as written, for what no field above names (a detail view shows all of it).
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, record: JobView | Mapping[str, Any], where: str = "job.json", *, path: str | None = None) -> JobView:
        """The view of ``record`` (a view passes through); RecordError for one from a newer schema.

        ``path`` is the job.json the record was read from, when it was read from one.
        """
        if isinstance(record, JobView):
            return record
        record = mapping_of(record, where, "job record")
        version = schema_version_of(record, where, SCHEMA_VERSION, "job record")
        bucket = record.get("bucket")
        if not isinstance(bucket, dict):  # records written before kernels existed have only num_tokens
            legacy = record.get(LEGACY_BUCKET_FIELD)
            bucket = {LEGACY_BUCKET_FIELD: legacy} if legacy is not None else {}
        neffs = as_list(record.get("neffs"))
        warnings = as_list(record.get("warnings"))
        return cls(
            schema_version=version,
            job_id=text(record.get("job_id")),
            name=text(record.get("name")),
            kernel=text(record.get("kernel")),
            bucket=bucket,
            outcome=text(record.get("outcome")),
            reason=text(record.get("reason")),
            created=text(record.get("created")),
            finished=text(record.get("finished")),
            duration_s=number(record.get("duration_s")),
            stage=text(record.get("stage")),
            backend=text(record.get("backend")),
            backend_reason=text(record.get("backend_reason")),
            neffs=tuple(n for n in neffs if isinstance(n, dict)),
            neff_note=text(record.get("neff_note")),
            model_pt=maybe_dict(record.get("model_pt")),
            numerics=maybe_dict(record.get("numerics")),
            metrics=as_dict(record.get("metrics")),
            warnings=tuple(str(w) for w in warnings),
            error=maybe_dict(record.get("error")),
            cache=as_dict(record.get("cache")),
            compiler=as_dict(record.get("compiler")),
            spec_hash=text(record.get("spec_hash")),
            spec=maybe_dict(record.get("spec")),
            makes_neff=record["makes_neff"] if isinstance(record.get("makes_neff"), bool) else None,
            compiler_command=as_dict(record.get("compiler_command")),
            stages=as_dict(record.get("stages")),
            sources=maybe_dict(record.get("sources")),
            weights=as_dict(record.get("weights")),
            pid=integer(record.get("pid")),
            pid_start=record.get("pid_start"),
            cache_key=text(record.get("cache_key")),
            versions=maybe_dict(record.get("versions")),
            host=text(record.get("host")),
            exit_code=integer(record.get("exit_code")),
            torchneuron=as_dict(record.get("torchneuron")),
            error_text=text(record.get("error")),
            taps_request=as_dict(record.get("taps_request")),
            taps=as_dict(record.get("taps")),
            profiled_request=as_dict(record.get("profiled_request")),
            path=path,
            raw=record,
        )

    @property
    def directory(self) -> Path | None:
        """The job directory, the one its NEFFs' recorded paths are relative to; None when not read from a file."""
        return Path(self.path).parent if self.path is not None else None

    @property
    def requested_command(self) -> tuple[str, ...] | None:
        """The compiler command the backend asked for, when the record holds one as a list of strings."""
        return _argv(self.compiler_command.get("requested"))

    @property
    def actual_command(self) -> tuple[str, ...] | None:
        """The compiler command that ran, when the record holds one as a list of strings."""
        return _argv(self.compiler_command.get("actual"))

    def to_dict(self) -> dict[str, Any]:
        """The fields ``neffbench`` prints of a job, as JSON-ready values."""
        return {
            "path": self.path,
            "job_id": self.job_id,
            "schema_version": self.schema_version,
            "outcome": self.outcome,
            "reason": self.reason,
            "created": self.created,
            "backend": self.backend,
            "spec": self.spec if self.spec is not None else {},
            "spec_hash": self.spec_hash,
            "compiler_command": {
                "requested": None if self.requested_command is None else list(self.requested_command),
                "actual": None if self.actual_command is None else list(self.actual_command),
            },
            "neffs": [dict(n) for n in self.neffs],
        }

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

    @property
    def variant_of(self) -> str | None:
        """The job a compare's tapped job or a profiled variant was compiled for; None for an ordinary job."""
        return text(self.taps_request.get("of")) or text(self.profiled_request.get("of"))

    @property
    def interface_names(self) -> dict[str, str]:
        """The module's name of each NEFF tensor, as the pre-flight check paired them (``{"input0": "query"}``)."""
        interface = as_dict(as_dict(self.raw.get("preflight")).get("interface"))
        names: dict[str, str] = {}
        for line in (*as_list(interface.get("inputs")), *as_list(interface.get("outputs"))):
            tensor, arrow, name = str(line).partition(" <- ")
            if arrow and tensor and name:
                names[tensor] = name
        return names


def _argv(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return tuple(value)
    return None


def bucket_of(record: JobView | Mapping[str, Any]) -> dict[str, Any]:
    """A record's bucket (records written before kernels existed have only ``num_tokens``)."""
    return JobView.of(record).bucket
