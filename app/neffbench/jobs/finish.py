"""How a job ends: the verdict from what happened, and the final record (NEFFs, compiler command, cache key).

A mixin of :class:`neffbench.jobs.compile_job.CompileJob`, kept apart because it reads everything the
runner saw and decides nothing about running.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.backends import registry as backends
from neffbench.compilerlog.commands import command_from_text, dropped_options
from neffbench.compilerlog.exits import meaning as explain_exit_code
from neffbench.compilerlog.reader import CompilerLog
from neffbench.jobs import records
from neffbench.procs import Child
from neffbench.views.job import JobView

log = logging.getLogger("neffbench.jobs.compile_job")


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


@dataclass
class JobResult:
    """How a job ended; ``record`` is the final job.json."""

    job_dir: Path
    outcome: str
    reason: str | None
    exit_code: int | None
    neffs: list[dict]
    numerics: dict | None
    record: dict

    @property
    def view(self) -> JobView:
        """The final record as every reader takes it (the dict stays the runner's, to write)."""
        return JobView.of(self.record, str(self.job_dir / records.RECORD_NAME))


class Finishing:
    """The runner's last steps; the attributes it reads are the runner's (declared here, set by CompileJob)."""

    record: dict[str, Any]
    job_dir: Path | None
    timeout: float
    _proc: Child | None
    _cancelled: bool
    _timed_out: bool
    _child_outcome: dict[str, Any] | None
    _write_error: str | None
    _parser: CompilerLog
    _log_fh: Any
    _events_fh: Any
    _t0: float
    _emit: Callable[[dict[str, Any]], None]
    _note: Callable[[str], None]

    def _verdict(
        self, returncode: int | None, spawn_error: str | None, interrupted: str | None
    ) -> tuple[str, str | None]:
        stage = self.record.get("stage") or "start"
        if interrupted:
            return "interrupted", f"{interrupted} during stage '{stage}'"
        if spawn_error:
            return "failed", spawn_error
        if self._write_error:
            return "failed", self._write_error
        if self._cancelled:
            if self._proc is None:
                return "cancelled", "cancelled before it started"
            return "cancelled", f"cancelled during stage '{stage}'"
        if self._timed_out:
            return "failed", f"timed out after {self.timeout:g} s during stage '{stage}'"
        child = self._child_outcome
        if child is not None:
            outcome, reason = child.get("outcome", "failed"), child.get("reason")
            if outcome == "succeeded" and returncode != 0:
                return "failed", f"the worker reported success but exited with {returncode}"
            return outcome, reason
        if returncode is not None and returncode < 0:
            return "failed", (
                f"the worker died from {_signal_name(returncode)} ({returncode}: "
                f"{explain_exit_code(returncode)}) during stage '{stage}'"
            )
        return "failed", f"the worker exited with {returncode} without reporting an outcome during stage '{stage}'"

    def _finalize(
        self, returncode: int | None, *, spawn_error: str | None = None, interrupted: str | None = None
    ) -> JobResult:
        if self.job_dir is None:
            raise RuntimeError("a job is finalised only once its directory exists")
        rec, job_dir = self.record, self.job_dir
        outcome, reason = self._verdict(returncode, spawn_error, interrupted)
        now = records.utc_now()
        current = rec.get("stage")
        if current in rec["stages"] and rec["stages"][current].get("end") is None:
            _close_stage(rec["stages"][current], records.iso(now))
        rec["outcome"], rec["reason"], rec["exit_code"] = outcome, reason, returncode
        rec["finished"] = records.iso(now)
        rec["duration_s"] = round(time.monotonic() - self._t0, 3) if self._t0 else 0.0
        rec["neffs"] = records.neff_entries(job_dir, rec.get("backend"))
        model_pt = job_dir / "model.pt"
        rec["model_pt"] = records.file_entry(job_dir, model_pt) if model_pt.is_file() else None
        backend = backends.recorded(rec.get("backend"))
        if backend is not None and backend.neff_note:
            rec["neff_note"] = backend.neff_note
        elif not rec["neffs"]:
            rec["neff_note"] = "no NEFF was produced"
        cached = bool((rec.get("cache") or {}).get("hit"))
        if (backend is None or backend.runs_compiler) and not cached:
            self._finalize_compiler(job_dir, rec)
        if outcome != "succeeded" or rec.get("backend") != rec.get("cache_key_backend"):
            # Never served: a failure, or a job the worker compiled with another backend than predicted.
            rec["cache_key"] = None
        if outcome != "succeeded" and self._parser.first_error is not None:
            rec["error"] = self._parser.first_error.to_record()
        child = self._child_outcome or {}
        if reason and (child.get("outcome"), child.get("reason")) != (outcome, reason):
            self._note(f"neffbench: {outcome}: {reason}")  # the worker did not say it itself
        try:
            records.write_record(job_dir, rec)
        except OSError as exc:  # the last complete job.json stays; the caller still gets the outcome
            log.warning("%s", records.cannot_write(job_dir / records.RECORD_NAME, exc))
        for fh in (self._log_fh, self._events_fh):
            if fh is not None:
                try:
                    fh.flush()
                except OSError:
                    pass
        self._emit(
            {
                "type": "finished",
                "outcome": outcome,
                "reason": reason,
                "exit_code": returncode,
                "job_dir": str(job_dir),
                "backend": rec.get("backend"),
                "makes_neff": rec.get("makes_neff"),
                "neffs": rec["neffs"],
                "neff_note": rec.get("neff_note"),
            }
        )
        for fh in (self._log_fh, self._events_fh):
            if fh is not None:
                try:
                    fh.close()
                except OSError:
                    pass
        return JobResult(job_dir, outcome, reason, returncode, rec["neffs"], rec.get("numerics"), rec)

    def _finalize_compiler(self, job_dir: Path, rec: dict[str, Any]) -> None:
        cmd = rec["compiler_command"]
        command_txt = job_dir / "compiler" / "command.txt"
        actual, source = None, None
        if command_txt.is_file():
            actual, source = command_from_text(command_txt.read_text(encoding="utf-8", errors="replace")), "command.txt"
        elif self._parser.command:
            actual, source = self._parser.command, "log"
        cmd["actual"], cmd["actual_source"] = actual, source
        cmd["dropped"] = dropped_options(cmd.get("requested_args"), actual)
        if cmd["dropped"]:
            message = f"requested compiler options missing from the command actually run: {', '.join(cmd['dropped'])}"
            rec["warnings"].append(message)
            self._note(f"neffbench: warning: {message}")
        rec["compiler"] = self._parser.summary()
        if rec["versions"].get("neuronx_cc") is None and self._parser.compiler_version:
            rec["versions"]["neuronx_cc"] = self._parser.compiler_version


def _from_unix(t: Any):
    import datetime as _dt

    if isinstance(t, (int, float)):
        return _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
    return None


def _close_stage(entry: dict[str, Any], when: str) -> None:
    import datetime as _dt

    entry["end"] = when
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    start = _dt.datetime.strptime(entry["start"], fmt)
    end = _dt.datetime.strptime(when, fmt)
    entry["duration_s"] = round((end - start).total_seconds(), 3)
