"""A job explained: its outcome and cause from its record, with its log's explanation when it has one.

A log alone cannot say how a job ended: a cpu-check job runs no compiler, so its log holds no compiler
status, and a job can fail after its compiler passed. What the window's Explanation pane shows of a job
directory comes from here; a loose log file is still explained by ``compilerlog.explain`` alone.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.compilerlog.commands import competing_options
from neffbench.compilerlog.explain import JOB_LOG, ExplainError, Explanation, explain
from neffbench.jobs.protocol import stage_words
from neffbench.jobs.summary import describe_neffs, describe_numerics, failure_sentence, human_bytes
from neffbench.views.job import JobView
from neffbench.views.job_file import RecordError, read_job

RECORD_NAME = "job.json"
# The colour keys the log's explanation uses, for a job's own outcomes.
OUTCOME_KEYS = {"succeeded": "passed", "failed": "failed", "interrupted": "failed"}


def job_dir_of(path: str | Path) -> Path | None:
    """The job directory ``path`` stands for (the directory itself or its job.log), or None for any other path."""
    path = Path(path)
    if path.is_dir() and (path / RECORD_NAME).is_file():
        return path
    if path.name == JOB_LOG and (path.parent / RECORD_NAME).is_file():
        return path.parent
    return None


@dataclass(frozen=True)
class JobExplanation:
    """``job`` is None when its record cannot be read (``record_error`` says why); ``log`` None without a log."""

    job_dir: Path
    job: JobView | None
    log: Explanation | None
    record_error: str | None = None

    @property
    def runs_compiler(self) -> bool:
        cls = self.job.backend_class if self.job is not None else None
        return cls is None or cls.runs_compiler  # a backend not yet known may well have run one

    @property
    def outcome(self) -> str:
        """``passed``, ``failed`` or ``unknown``, as for a log: what the pane colours its headline by."""
        if self.job is None:
            return self.log.outcome if self.log is not None else "unknown"
        return OUTCOME_KEYS.get(self.job.outcome or "", "unknown")

    @property
    def headline(self) -> str:
        job, log = self.job, self.log
        if job is None:
            return log.headline if log is not None else f"Cannot read this job: {self.record_error}"
        if job.outcome in (None, "running"):
            return f"Still running (stage {job.stage or 'starting'}): explained here again once it ends"
        compiler_said = self.runs_compiler and log is not None and not job.cache_hit and log.outcome != "unknown"
        if job.outcome == "succeeded":
            return "Succeeded" + self._made()
        if compiler_said and log is not None:
            # The compiler's own account, which names the first error and weighs the job's end against it.
            return log.headline
        return f"{job.outcome.capitalize()}: {self.cause}"

    @property
    def cause(self) -> str:
        """Why the job did not succeed, cause first (empty for a job that did)."""
        job = self.job
        if job is None or job.outcome == "succeeded":
            return ""
        if not self.runs_compiler and job.reason:
            return job.reason  # the worker's own sentence names the call that raised and where
        return failure_sentence(job)

    def _made(self) -> str:
        job, log = self.job, self.log
        assert job is not None
        if job.cache_hit:
            return f", served from the cache of {job.cache.get('from') or 'an earlier job'}: nothing was compiled here"
        if job.no_neff_by_design:
            return f": {job.backend} checked the module on the CPU with torch.jit.trace; no NEFF, by design"
        said = f" (Compiler status {log.log.status})" if log is not None and log.log.status else ""
        n = len(job.neffs)
        sizes = ", ".join(human_bytes(x.get("size")) for x in job.neffs)
        return said + (f": {n} NEFF{'s' if n != 1 else ''} ({sizes})" if n else ": no NEFF recorded")

    def facts(self) -> list[tuple[str, str]]:
        """What the record says, a label and a sentence each, for the top of the explanation."""
        job = self.job
        if job is None:
            return [("Record", f"cannot be read: {self.record_error}")]
        took = f" in {job.duration_s:.1f} s" if job.duration_s is not None else ""
        out = [("Job", f"{job.job_id or self.job_dir.name}: {job.outcome or 'no outcome'}{took}")]
        if self.cause:
            said = job.stage and (job.stage in self.cause or stage_words(job.stage) in self.cause)
            stage = f" (stage {job.stage})" if job.stage and not said else ""
            out.append(("Cause", self.cause + stage))
        if job.backend:
            out.append(("Backend", f"{job.backend}: {job.backend_reason or 'no reason recorded'}"))
        if job.cache_hit:
            saved = job.cache.get("saved_s")
            spared = f"; {saved:.1f} s of compiling spared" if isinstance(saved, (int, float)) else ""
            out.append(("Cache", f"served from the cache of {job.cache.get('from')}{spared}; no worker ran"))
        if job.no_neff_by_design and job.outcome != "succeeded":
            out.append(("NEFF", f"none: {job.backend} makes none"))
        else:
            out.append(("NEFF", "; ".join(describe_neffs(job))))
        if job.outcome == "succeeded":
            out.append(("Numerics", describe_numerics(job.numerics).removeprefix("numerics").lstrip(": ")))
        if not self.runs_compiler:
            out.append(("Compiler", f"none ran ({job.backend}): no compiler version, command or passes to show"))
        return out

    @property
    def recorded_version(self) -> str | None:
        """The compiler's version as the job's record has it (from its log when it ran, or the version installed)."""
        job = self.job
        if job is None or not self.runs_compiler:
            return None
        found = (job.compiler or {}).get("version_from_log") or (job.versions or {}).get("neuronx_cc")
        return str(found) if found else None

    @property
    def recorded_command(self) -> list[str] | None:
        """The compiler command the job's record has (the one that ran, else the one asked for)."""
        job = self.job
        if job is None or not self.runs_compiler:
            return None
        command = job.compiler_command or {}
        found = command.get("actual") or command.get("requested")
        return [str(a) for a in found] if isinstance(found, list) and found else None

    def to_json(self) -> dict[str, Any]:
        """The log's explanation (empty parts without a log) with the job's headline, outcome and facts; the
        compiler's version and command from the record where the log does not say them (``*_from``: job.json)."""
        data = self.log.to_json() if self.log is not None else _no_log(self.job_dir)
        if not data.get("compiler_version") and self.recorded_version:
            data.update(compiler_version=self.recorded_version, compiler_version_from=RECORD_NAME)
        if not data.get("command") and self.recorded_command:
            data.update(command=shlex.join(self.recorded_command), command_from=RECORD_NAME)
            data["command_notes"] = competing_options(self.recorded_command)
        job = self.job
        data.update(
            {
                "headline": self.headline,
                "outcome": self.outcome,
                "job_id": (job.job_id if job is not None else None) or self.job_dir.name,
                "job_dir": str(self.job_dir),
                "runs_compiler": self.runs_compiler,
                "facts": [list(f) for f in self.facts()],
                # The record's first error, for a log that does not show it (or a job without a log).
                "record_error": job.error if job is not None and not data.get("first_error") else None,
            }
        )
        return data


def _no_log(job_dir: Path) -> dict[str, Any]:
    return {
        "source": str(job_dir / RECORD_NAME),
        "lines": 0,
        "status": None,
        "exit_code": None,
        "first_error": None,
        "errors": [],
        "codes": [],
        "passes": [],
        "compiler_version": None,
        "command": None,
        "compiles": [],
        "context": [],
        "no_log": True,
    }


def explain_job(job_dir: str | Path) -> JobExplanation:
    """Read a job directory's record and log (a few files: call it off the GUI thread)."""
    job_dir = Path(job_dir)
    try:
        job: JobView | None = read_job(job_dir / RECORD_NAME)
        problem = None
    except RecordError as exc:
        job, problem = None, str(exc)
    try:
        log: Explanation | None = explain(job_dir)
    except ExplainError:
        log = None
    return JobExplanation(job_dir, job, log, problem)
