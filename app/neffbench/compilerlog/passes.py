"""Compiler passes and how long each run took.

neuronx-cc logs ``Running Tensorizer`` and ``Tensorizer finished after 12.3 seconds`` (under the pass's
own logger or its parent's); older releases write ``INFO (VNSplitter) Time: 0.883 seconds`` (the pass in
parentheses, the logger always WalrusDriver) or end a timed region with ``Exit time region:
delta=0.057s``, named only by the last part of the record's logger. ``Running pass X`` ... ``Finished pass X``
is a run too; without a stated time it lasted from the one timestamp to the other. A pass may run
more than once (once per subgraph, or again after a retry): every run is kept, in the order runs end.

A pass's name says nothing about the compile: ``error_injector`` and ``ErrorInjector`` are passes
like any other, so the lines that start and end a pass are markers, never failure statements
(``is_marker``), whatever words the name holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neffbench.compilerlog.lines import LogRecord

_START_RE = re.compile(r"^Running (?:walrus pass: |pass:? )?(?P<name>[A-Za-z_][\w.]*)\s*$")
_FINISHED_PASS_RE = re.compile(
    r"^Finished pass:? (?P<name>[A-Za-z_][\w.]*)"
    r"(?: (?:in|after) (?P<seconds>\d+(?:\.\d+)?) ?(?:seconds|secs?|s))?\.?\s*$"
)
_END_RE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*) finished after (?P<seconds>\d+(?:\.\d+)?) ?(?:seconds|s)\b")
_TIME_RE = re.compile(r"(?:\((?P<name>[A-Za-z_][\w.]*)\) )?Time: (?P<seconds>\d+(?:\.\d+)?) ?(?:seconds|secs?|s)\b")
_DELTA_RE = re.compile(r"^Exit time region: delta=(?P<seconds>\d+(?:\.\d+)?) ?s\b")
_JOB_NAME_RE = re.compile(r"^(?:job\.)?(?P<name>[A-Za-z_]\w*?)(?:\.\d+)?$")


def is_marker(body: str) -> bool:
    """True for a line that starts or ends a pass, or lists the pipeline's passes (a record's message)."""
    return (
        body.startswith("Pipeline:")
        or _START_RE.match(body) is not None
        or _END_RE.match(body) is not None
        or _FINISHED_PASS_RE.match(body) is not None
    )


def _elapsed(start: str | None, end: str | None) -> float | None:
    """Seconds between two ISO timestamps, or None (another form, or a clock that went backwards)."""
    try:
        if start is None or end is None:
            return None
        t0, t1 = (datetime.fromisoformat(t.replace("Z", "+00:00").replace(",", ".")) for t in (start, end))
        seconds = (t1 - t0).total_seconds()
    except (AttributeError, TypeError, ValueError):
        return None
    return round(seconds, 6) if seconds >= 0 else None


def pass_path(logger: str | None, name: str) -> str:
    """Where a pass sits, the same for its start and end lines.

    The compiler logs a pass under its own logger (``sg0000/Tensorizer/BirCodeGenLoop``) or its
    parent's, and sometimes repeats the name (``root/Tensorizer/Tensorizer``).
    """
    parts = [p for p in (logger or "").split("/") if p]
    if not parts or parts[-1] != name:
        parts.append(name)
    while len(parts) > 1 and parts[-2] == parts[-1]:
        parts.pop()
    return "/".join(parts)


def logger_pass_name(logger: str | None) -> str | None:
    """The pass an older record's logger names: ``job.Frontend.0`` is Frontend, ``root/Tensorizer`` Tensorizer."""
    last = (logger or "").split("/")[-1]
    m = _JOB_NAME_RE.match(last)
    return m.group("name") if m else (last or None)


@dataclass
class PassRun:
    name: str
    path: str | None
    started: str | None = None
    duration_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.duration_s}


class PassTracker:
    def __init__(self) -> None:
        self.runs: list[PassRun] = []  # finished runs, in the order they ended
        self.open: dict[str, PassRun] = {}  # started and not yet finished, by path

    def feed(self, rec: LogRecord, body: str) -> dict[str, Any] | None:
        """The pass event ``body`` (a record's message) implies, if any."""
        if body.startswith("Running "):
            m = _START_RE.match(body)
            if m:
                name = m.group("name")
                path = pass_path(rec.logger, name)
                self.open[path] = PassRun(name, path, rec.timestamp)
                return _event(name, path, "started", None, rec.timestamp)
        if "finished after" in body:
            m = _END_RE.match(body)
            if m:
                return self._finish(m.group("name"), rec, float(m.group("seconds")))
        if body.startswith("Finished pass"):
            m = _FINISHED_PASS_RE.match(body)
            if m:
                return self._finish(m.group("name"), rec, float(m.group("seconds")) if m.group("seconds") else None)
        if rec.kind != "old":
            return None  # the timed-region forms belong to the older record form only
        if "Time:" in body:
            m = _TIME_RE.search(body)
            # "INFO (VNSplitter) Time: 0.883 seconds" under [WalrusDriver]: the pass is in parentheses.
            name = (m.group("name") if m else None) or logger_pass_name(rec.logger)
            if m and name:
                return self._finish(name, rec, float(m.group("seconds")))
        if body.startswith("Exit time region"):
            m = _DELTA_RE.match(body)
            name = logger_pass_name(rec.logger)
            if m and name:
                return self._finish(name, rec, float(m.group("seconds")))
        return None

    def _finish(self, name: str, rec: LogRecord, seconds: float | None) -> dict[str, Any]:
        path = pass_path(rec.logger, name)
        run = self.open.pop(path, None) or PassRun(name, path)
        run.duration_s = seconds if seconds is not None else _elapsed(run.started, rec.timestamp)
        self.runs.append(run)
        return _event(name, path, "finished", run.duration_s, rec.timestamp)

    def unfinished(self) -> list[PassRun]:
        return list(self.open.values())


def _event(name: str, path: str, state: str, seconds: float | None, t: str | None) -> dict[str, Any]:
    return {"type": "pass", "name": name, "path": path, "state": state, "duration_s": seconds, "t": t}
