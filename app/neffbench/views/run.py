"""A run record read: a frozen, typed view of ``<job>/runs/<UTC time>-<runtime>.json``, built in one place.

Writing stays with the dict the parent keeps (``runs/neff_run.py``, and ``runs/history.py`` marking a run
``interrupted``); whatever reads a run record takes it through :meth:`RunView.of`. Run records carried
``schema_version`` from the first one written; those from before a field existed (``pid`` and ``pid_start``,
``warnings``, ``variant``, ``exit_code``, ``log_tail``) read it as None or empty. A record from a newer
``schema_version`` is refused with a sentence, as a job record is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neffbench.views.fields import (
    as_dict,
    as_list,
    integer,
    mapping_of,
    maybe_dict,
    number,
    schema_version_of,
    text,
)

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RunView:
    """What a run record says; a field the record lacks (or holds with the wrong type) is None or empty."""

    schema_version: int
    run_id: str | None
    job_id: str | None
    neff: str | None
    runtime_requested: str | None
    runtime: str | None
    label: str | None
    on_device: bool
    runtime_reason: str | None
    mode: str | None
    variant: str | None
    core: int | None
    warmup: int | None
    iterations_requested: int | None
    outcome: str | None
    reason: str | None
    stage: str | None
    started: str | None
    finished: str | None
    host: str | None
    pid: int | None
    pid_start: Any
    exit_code: int | None
    warnings: tuple[str, ...]
    checks: tuple[str, ...]
    numerics: dict[str, Any] | None
    cold_ms: float | None
    durations_ms: tuple[float, ...]
    stats: dict[str, Any] | None
    secondary: dict[str, Any] | None
    profile: dict[str, Any] | None
    # ``--steps``: each later call's comparison, the state carried ({"calls": [...], "match", "prefill"}).
    steps: dict[str, Any] | None
    bucket: dict[str, Any]
    items_per_call: int | None
    versions: dict[str, Any]
    # Why it ran when not to be timed: "compare" for a compare's one call (neffbench.numerics); None otherwise.
    purpose: str | None
    # Where it was read from: ``runs/history.py`` adds it (the file itself does not say).
    path: str | None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, record: RunView | Mapping[str, Any], where: str = "the run record") -> RunView:
        """The view of ``record`` (a view passes through); RecordError for one from a newer schema."""
        if isinstance(record, RunView):
            return record
        record = mapping_of(record, where, "run record")
        durations = [d for d in as_list(record.get("durations_ms")) if number(d) is not None]
        return cls(
            schema_version=schema_version_of(record, where, SCHEMA_VERSION, "run record"),
            run_id=text(record.get("run_id")),
            job_id=text(record.get("job_id")),
            neff=text(record.get("neff")),
            runtime_requested=text(record.get("runtime_requested")),
            runtime=text(record.get("runtime")),
            label=text(record.get("label")),
            on_device=bool(record.get("on_device")),
            runtime_reason=text(record.get("runtime_reason")),
            mode=text(record.get("mode")),
            variant=text(record.get("variant")),
            core=integer(record.get("core")),
            warmup=integer(record.get("warmup")),
            iterations_requested=integer(record.get("iterations_requested")),
            outcome=text(record.get("outcome")),
            reason=text(record.get("reason")),
            stage=text(record.get("stage")),
            started=text(record.get("started")),
            finished=text(record.get("finished")),
            host=text(record.get("host")),
            pid=integer(record.get("pid")),
            pid_start=record.get("pid_start"),
            exit_code=integer(record.get("exit_code")),
            warnings=tuple(str(w) for w in as_list(record.get("warnings"))),
            checks=tuple(str(c) for c in as_list(record.get("checks"))),
            numerics=maybe_dict(record.get("numerics")),
            cold_ms=number(record.get("cold_ms")),
            durations_ms=tuple(float(d) for d in durations),
            stats=maybe_dict(record.get("stats")),
            secondary=maybe_dict(record.get("secondary")),
            profile=maybe_dict(record.get("profile")),
            steps=maybe_dict(record.get("steps")),
            bucket=as_dict(record.get("bucket")),
            items_per_call=integer(record.get("items_per_call")),
            versions=as_dict(record.get("versions")),
            purpose=text(record.get("purpose")),
            path=text(record.get("path")),
            raw=record,
        )

    @property
    def succeeded_with_timings(self) -> bool:
        """A succeeded run that has latency figures (what a curve or a sweep's row shows); a compare's single
        call, without warm-up, is no measurement of latency."""
        return self.outcome == "succeeded" and bool(self.stats) and self.purpose != "compare"

    @property
    def where(self) -> str:
        """The runtime's label, else its name, else what was asked for in brackets."""
        return self.label or self.runtime or f"({self.runtime_requested or '?'})"
