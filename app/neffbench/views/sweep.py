"""A sweep's record read: a frozen, typed view of ``sweep.json`` and of each of its points, built in one place.

Writing stays with ``sweeps/record.py`` (the running sweep's dict, rewritten whole at every change);
whatever reads a sweep takes it through :meth:`SweepView.of`. ``sweep.json`` carried ``schema_version``
from the first sweep written and its layout has not changed since; a record without the field is the
first layout, and one from a newer ``schema_version`` is refused with a sentence, as a job record is.
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
    number,
    schema_version_of,
    text,
)

SCHEMA_VERSION = 1


def point_number(index: int) -> int:
    """A point as the user counts it, from 1; its index, from 0, is what sweep.json and the events keep."""
    return index + 1


@dataclass(frozen=True)
class PointView:
    """One point of a sweep: its swept values, its state and the job that ran it (by directory name)."""

    index: int
    values: dict[str, Any]
    bucket: dict[str, Any]
    label: str | None
    state: str
    problems: tuple[dict[str, Any], ...]
    spec_hash: str | None
    memory_bytes: int | None
    memory_source: str | None
    job_id: str | None
    cached: bool
    dispatched: bool
    node: str | None
    attempts: int | None
    lost_attempts: tuple[Any, ...]
    reason: str | None
    started: str | None
    finished: str | None
    duration_s: float | None
    peak_rss_bytes: int | None

    @classmethod
    def of(cls, point: Mapping[str, Any], position: int) -> PointView:
        """The view of one point; ``position`` is its index when the point does not say."""
        index = integer(point.get("index"))
        return cls(
            index=position if index is None else index,
            values=as_dict(point.get("values")),
            bucket=as_dict(point.get("bucket")),
            label=text(point.get("label")),
            state=text(point.get("state")) or "pending",
            problems=tuple(
                {"field": p.get("field"), "message": str(p.get("message")), "severity": p.get("severity")}
                for p in as_list(point.get("problems"))
                if isinstance(p, dict)
            ),
            spec_hash=text(point.get("spec_hash")),
            memory_bytes=integer(point.get("memory_bytes")),
            memory_source=text(point.get("memory_source")),
            job_id=text(point.get("job_id")),
            cached=bool(point.get("cached")),
            dispatched=bool(point.get("dispatched")),
            node=text(point.get("node")),
            attempts=integer(point.get("attempts")),
            lost_attempts=tuple(as_list(point.get("lost_attempts"))),
            reason=text(point.get("reason")),
            started=text(point.get("started")),
            finished=text(point.get("finished")),
            duration_s=number(point.get("duration_s")),
            peak_rss_bytes=integer(point.get("peak_rss_bytes")),
        )


@dataclass(frozen=True)
class SweepView:
    """What a sweep record says; a field the record lacks (or holds with the wrong type) is None or empty."""

    schema_version: int
    sweep_id: str | None
    name: str | None
    kernel: str | None
    state: str | None
    reason: str | None
    created: str | None
    finished: str | None
    spec: dict[str, Any]
    axes: tuple[dict[str, Any], ...]
    short_names: dict[str, str]
    zip: bool
    settings: dict[str, Any]
    workdir: str | None
    host: str | None
    pid: int | None
    pid_start: Any
    versions: dict[str, Any]
    nodes: dict[str, Any]
    counts: dict[str, int]
    points: tuple[PointView, ...]
    # Where it was read from: ``sweeps/record.py`` adds it on loading (the file itself does not say).
    path: str | None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, record: SweepView | Mapping[str, Any], where: str = "sweep.json") -> SweepView:
        """The view of ``record`` (a view passes through); RecordError for one from a newer schema."""
        if isinstance(record, SweepView):
            return record
        record = mapping_of(record, where, "sweep record")
        points = [p for p in as_list(record.get("points")) if isinstance(p, dict)]
        return cls(
            schema_version=schema_version_of(record, where, SCHEMA_VERSION, "sweep record"),
            sweep_id=text(record.get("sweep_id")),
            name=text(record.get("name")),
            kernel=text(record.get("kernel")),
            state=text(record.get("state")),
            reason=text(record.get("reason")),
            created=text(record.get("created")),
            finished=text(record.get("finished")),
            spec=as_dict(record.get("spec")),
            axes=tuple(a for a in as_list(record.get("axes")) if isinstance(a, dict) and text(a.get("field"))),
            short_names={k: v for k, v in as_dict(record.get("short_names")).items() if isinstance(v, str)},
            zip=bool(record.get("zip")),
            settings=as_dict(record.get("settings")),
            workdir=text(record.get("workdir")),
            host=text(record.get("host")),
            pid=integer(record.get("pid")),
            pid_start=record.get("pid_start"),
            versions=as_dict(record.get("versions")),
            nodes=as_dict(record.get("nodes")),
            counts={k: n for k, n in as_dict(record.get("counts")).items() if integer(n) is not None},
            points=tuple(PointView.of(p, i) for i, p in enumerate(points)),
            path=text(record.get("path")),
            raw=record,
        )

    @property
    def fields(self) -> list[str]:
        """The swept fields, in the grid's order."""
        return [str(a["field"]) for a in self.axes]
