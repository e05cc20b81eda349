"""A sweep's tracker: what executors say about its points, written to ``sweep.json`` and passed on to the caller."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neffbench.jobs import records
from neffbench.sweeps.record import SweepRecord
from neffbench.sweeps.versions import describe, differences
from neffbench.views.job import JobView

log = logging.getLogger("neffbench.sweeps.sweep")

SweepLineCallback = Callable[[int | None, str], None]
EventCallback = Callable[[dict], None]


class Tracker:
    """What executors say about points, written to ``sweep.json`` and passed on, each line and event with its point.

    Thread-safe: executors call it from their own threads. Events are the job's own (``job_id``, ``bucket``
    ...) plus ``point`` and ``sweep_id``, and the sweep's (see the package docstring).
    """

    def __init__(self, record: SweepRecord, on_line: SweepLineCallback | None, on_event: EventCallback | None):
        self.record = record
        self._on_line = on_line
        self._on_event = on_event
        self._seen_nodes: set[str] = set()
        self._modules: dict[str, tuple[int, dict[str, Any], str | None]] = {}  # closure key -> first point's weights
        self._lock = threading.Lock()

    def _call(self, callback: Callable[..., None] | None, *args: Any) -> None:
        if callback is None:
            return
        try:
            callback(*args)
        except Exception:  # noqa: BLE001 - a presenter's bug must not lose the sweep or its record
            log.exception("sweep on_line/on_event callback failed")

    def emit(self, ev: dict[str, Any]) -> None:
        self._call(self._on_event, {**ev, "sweep_id": self.record.sweep_id})

    def line(self, index: int | None, text: str) -> None:
        self._call(self._on_line, index, text)

    def note(self, index: int | None, text: str) -> None:
        """A line of the sweep's own."""
        self.line(index, f"neffbench: {text}")

    def job_event(self, index: int, ev: dict[str, Any]) -> None:
        self.emit({**ev, "point": index})

    def _changed(self, index: int, **changes: Any) -> dict[str, Any]:
        point = self.record.update_point(index, **changes)
        self.emit(
            {
                "type": "sweep_point",
                "point": index,
                "state": point["state"],
                "label": point["label"],
                "reason": point.get("reason"),
                "job_id": point.get("job_id"),
                "cached": point.get("cached"),
                "node": point.get("node"),
                "attempt": point.get("attempts"),
                "peak_rss_bytes": point.get("peak_rss_bytes"),
                "duration_s": point.get("duration_s"),
            }
        )
        return point

    def waiting(self, index: int, message: str) -> None:
        if self.record.point(index)["state"] == "pending":
            self._changed(index, state="waiting", reason=message)
        self.note(index, message)

    def started(
        self,
        index: int,
        *,
        job_dir: str | Path | None = None,
        node: str | None = None,
        attempt: int = 1,
        dispatched: bool = True,
    ) -> None:
        changes: dict[str, Any] = {"state": "running", "reason": None, "attempts": attempt, "dispatched": dispatched}
        if job_dir is not None:
            changes["job_id"] = Path(job_dir).name
        if node is not None:
            changes["node"] = node
        if self.record.point(index).get("started") is None:
            changes["started"] = records.iso()
        self._changed(index, **changes)

    def lost(self, index: int, attempt: int, reason: str) -> None:
        """An attempt whose worker or node died; the executor retries it (once)."""
        point = self.record.point(index)
        lost = [
            *point.get("lost_attempts", []),
            {"attempt": attempt, "node": point.get("node"), "job_id": point.get("job_id"), "reason": reason},
        ]
        self._changed(index, lost_attempts=lost, state="pending", reason=reason, job_id=None)
        self.note(index, f"attempt {attempt} was lost ({reason}); retrying")

    def finished(
        self,
        index: int,
        outcome: str,
        reason: str | None,
        *,
        job_dir: str | Path | None = None,
        peak_rss: int | None = None,
        node: str | None = None,
        cached: bool = False,
        duration_s: float | None = None,
    ) -> None:
        changes: dict[str, Any] = {"state": outcome, "reason": reason, "finished": records.iso(), "cached": cached}
        if job_dir is not None:
            changes["job_id"] = Path(job_dir).name
        if peak_rss is not None:
            changes["peak_rss_bytes"] = peak_rss
        if node is not None:
            changes["node"] = node
        if duration_s is not None:
            changes["duration_s"] = duration_s
        if job_dir is not None:
            changes.update(self._same_module(index, Path(job_dir), node))
        self._changed(index, **changes)
        took = f" in {duration_s:.1f} s" if duration_s is not None else ""
        why = f": {reason}" if reason and outcome != "succeeded" else ""
        self.note(index, f"{outcome}{' (cached)' if cached else ''}{took}{why}")

    def _same_module(self, index: int, job_dir: Path, node: str | None) -> dict[str, Any]:
        """Points that build the same module (one [module] section, one closure key) must have built the same
        weights, wherever they ran; a node whose files or libraries differ is said so, not left to look like a
        numerical difference. Returns what to record in the point."""
        try:
            job = JobView.of(records.read_record(job_dir), str(job_dir / records.RECORD_NAME))
        except (OSError, ValueError):  # RecordError is a ValueError too
            return {}
        weights, key = job.weights, (job.sources or {}).get("key")
        if not weights.get("sha256") or not key:
            return {}
        where = node or job.host
        with self._lock:
            first = self._modules.setdefault(key, (index, weights, where))
        if first[0] == index or first[1].get("sha256") == weights["sha256"]:
            return {"weights_sha256": weights["sha256"]}
        from neffbench.backends.weights_source import difference_sentence
        from neffbench.views.sweep import point_number

        sentence = (
            f"point {point_number(index)}{f' (on {where})' if where else ''} built a module that differs from point "
            f"{point_number(first[0])}'s{f' (on {first[2]})' if first[2] else ''}: "
            f"{difference_sentence(weights, first[1])}; their nodes' files or library versions differ "
            "(each job.json lists its sources)"
        )
        self.note(index, f"warning: {sentence}")
        return {"weights_sha256": weights["sha256"], "warning": sentence}

    def node(self, host: str, versions: dict[str, Any]) -> None:
        """A node's first task: its versions recorded, and reported when they differ from this machine's."""
        with self._lock:
            if host in self._seen_nodes:
                return
            self._seen_nodes.add(host)
        client = self.record.snapshot()["versions"]
        diff = differences(client, versions)
        nodes = {**self.record.snapshot()["nodes"], host: {"versions": versions, "differs": diff}}
        self.record.update(nodes=nodes)
        self.emit({"type": "sweep_node", "node": host, "versions": versions, "differs": diff})
        if diff:
            self.note(None, f"warning: {describe(host, diff)}")
