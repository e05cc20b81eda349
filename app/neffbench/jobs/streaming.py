"""What the worker says, as the job runner records it: lines into job.log, events into events.jsonl and job.json.

A mixin of :class:`neffbench.jobs.compile_job.CompileJob`, kept apart because it turns the worker's output into the
job's files and callbacks and decides nothing about starting, cancelling or waiting.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neffbench.backends.registry import NEFF_BACKENDS
from neffbench.compilerlog.reader import CompilerLog
from neffbench.jobs import prepare, records
from neffbench.jobs.finish import _close_stage, _from_unix
from neffbench.jobs.protocol import LOGFILE_PREFIX
from neffbench.jobs.record_events import apply_event
from neffbench.kernels import registry
from neffbench.neff.diff import file_differences
from neffbench.procs import EVENT_PREFIX, parse_event, stage_event
from neffbench.views.job import legacy_bucket_fields

log = logging.getLogger("neffbench.jobs.compile_job")


class Streaming:
    """The runner's handling of the worker's output; the attributes it reads are the runner's."""

    spec: Any
    job_dir: Path | None
    record: dict[str, Any]
    on_line: Callable[[str], None] | None
    on_event: Callable[[dict], None] | None
    _lock: threading.Lock
    _parser: CompilerLog
    _child_outcome: dict | None
    _write_error: str | None
    _log_fh: Any
    _events_fh: Any

    def _terminate_locked(self) -> None:
        raise NotImplementedError  # the runner's: it owns the child process

    # ---- lines and events --------------------------------------------------------------------

    def _handle_line(self, line: str) -> None:
        # A tool the worker starts shares its stdout: a partial line of the tool's, followed by one of the
        # worker's own, arrives glued to it. Split it where the worker's marker starts, so neither is misread.
        for marker in (EVENT_PREFIX, LOGFILE_PREFIX):
            cut = line.find(marker, 1)
            if cut > 0:
                self._handle_line(line[:cut])
                self._handle_line(line[cut:])
                return
        event = parse_event(line)
        if event is not None:
            self._handle_event(event)
            return
        from_logfile = line.startswith(LOGFILE_PREFIX)
        if from_logfile:
            line = line[len(LOGFILE_PREFIX) :]
        keep, derived = self._parser.feed(line, from_logfile=from_logfile)
        if (
            keep
            and self.record.get("stage") == "tracing"
            and self.record.get("backend") in NEFF_BACKENDS
            and self._parser.last_was_record
        ):
            # The worker notices the compiler by polling its workdir; its first log record here is sooner.
            self._handle_event({**stage_event("compiling"), "source": "compiler output"})
        if keep:
            self._write(self._log_fh, line + "\n")
            self._call(self.on_line, line)
        for ev in derived:
            self._emit(ev)

    def _handle_event(self, ev: dict[str, Any]) -> None:
        kind = ev["type"]
        if kind == "stage":
            if ev.get("stage") == self.record.get("stage"):
                return  # already entered on the compiler's first line
            self._enter_stage(ev.get("stage", "?"), ev.get("t"))
        elif kind == "outcome":
            self._child_outcome = ev
        elif kind == "sources":
            self._on_sources({k: v for k, v in ev.items() if k != "type"})
        elif apply_event(self.record, ev):
            self._write_record()
        self._emit(ev)

    def _on_sources(self, block: dict[str, Any]) -> None:
        """What the build read: the record's closure from now on. Its spec hash and cache key follow it when it
        differs from what was known before the job started (a file edited meanwhile, an import only the forward
        makes), so the cache never serves this NEFF for files it was not built from."""
        from neffbench.jobs import cache
        from neffbench.spec import spec_hash

        before = self.record.get("sources") or {}
        self.record["sources"] = {**block, "key": prepare.sources_key(self.spec), "how": "read by this job's build"}
        if not registry.for_spec(self.spec).runs_user_code or before.get("digest") == block.get("digest"):
            self._write_record()
            return
        self.record["spec_hash"] = spec_hash(self.spec, block.get("digest"))
        self.record["cache_key"] = cache.digest(
            cache.key(self.spec, self.record["cache_key_backend"], block.get("digest"))
        )
        if before:
            changed = ", ".join(name for name, _, _ in file_differences(before, block)) or "its digest"
            self._note(
                f"neffbench: the build read other files than were known before it started ({changed}); "
                f"this job's spec hash is now {self.record['spec_hash'][:8]}"
            )
        self._write_record()

    def _enter_stage(self, stage: str, t: float | None) -> None:
        when = records.iso(_from_unix(t))
        stages = self.record["stages"]
        current = self.record.get("stage")
        if current in stages and stages[current].get("end") is None:
            _close_stage(stages[current], when)
        stages[stage] = {"start": when, "end": None, "duration_s": None}
        if stage == "done":
            _close_stage(stages[stage], when)
        self.record["stage"] = stage
        self._write_record()

    def _emit(self, ev: dict[str, Any]) -> None:
        ev = {
            **ev,
            "job_id": self.record.get("job_id"),
            "bucket": self.record.get("bucket"),
            **legacy_bucket_fields(self.record.get("bucket") or {}),
        }
        if self._events_fh is not None and not self._events_fh.closed:
            self._write(self._events_fh, json.dumps(ev, default=str, ensure_ascii=False) + "\n")
        self._call(self.on_event, ev)

    def _call(self, callback: Callable[[Any], None] | None, arg: Any) -> None:
        if callback is None:
            return
        try:
            callback(arg)
        except Exception:  # noqa: BLE001 - a presenter's bug must not lose the job or its record
            log.exception("on_line/on_event callback failed")

    def _note(self, text: str) -> None:
        """A line of the runner's own in the log (and on_line)."""
        self._parser.feed(text)  # counted, so job.json's line numbers are job.log's
        self._write(self._log_fh, text + "\n")
        self._call(self.on_line, text)

    # ---- writes that may fail (a full disk, a file-size limit) ----

    def _write(self, fh: Any, text: str) -> None:
        if self._write_error is not None or fh is None or fh.closed:
            return
        try:
            fh.write(text)
        except OSError as exc:
            self._write_failed(Path(fh.name), exc)

    def _flush_log(self) -> None:
        if self._write_error is None and not self._log_fh.closed:
            try:
                self._log_fh.flush()
            except OSError as exc:
                self._write_failed(Path(self._log_fh.name), exc)

    def _write_record(self) -> None:
        if self._write_error is not None or self.job_dir is None:
            return
        try:
            records.write_record(self.job_dir, self.record)
        except OSError as exc:
            self._write_failed(self.job_dir / records.RECORD_NAME, exc)

    def _write_failed(self, path: Path, exc: OSError) -> None:
        """The job cannot be recorded any more: say why once, stop the worker, and fail the job."""
        self._write_error = records.cannot_write(path, exc)
        self._call(self.on_line, f"neffbench: {self._write_error}; stopping the job")
        with self._lock:
            self._terminate_locked()
