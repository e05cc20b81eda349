"""Words for a finished job record: what it made, how its numerics compare, what went wrong; shared by CLI and GUI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neffbench.jobs.records import NO_NEFF_NOTE
from neffbench.usercode.tracebacks import without_foreign_frames
from neffbench.views.job import JobView

Record = Mapping[str, Any] | JobView  # job.json as read, or its view


def human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def outcome_label(record: Record | None, outcome: str | None = None) -> str:
    """``succeeded``, or ``succeeded (cached)`` for a job served from the cache."""
    job = JobView.of(record or {})
    outcome = outcome or job.outcome or "?"
    return f"{outcome} (cached)" if job.cache_hit else outcome


def describe_numerics(numerics: dict[str, Any] | None) -> str:
    if not numerics:
        return "numerics: not checked (the job did not reach verification)"
    if not numerics.get("checked"):
        return f"numerics: not checked ({numerics.get('skipped_reason')})"
    verdict = "match" if numerics.get("match") else "MISMATCH"
    against = "against the eager reference"
    steps = numerics.get("steps")
    if steps:  # a module with state: each call given the state the one before returned
        failed = [str(s["step"] + 1) for s in steps if not s["match"]]
        against += f" at each of {len(steps)} calls" if not failed else f" at call {', '.join(failed)} of {len(steps)}"
        against += ", the state carried from one to the next"
    return (
        f"numerics on {numerics.get('where')}: {verdict} {against} (max abs error "
        f"{numerics['max_abs_error']:.3g}, max rel error {numerics['max_rel_error']:.3g}; atol {numerics['atol']:g}, "
        f"rtol {numerics['rtol']:g} for {numerics.get('tolerance_basis')})"
    )


def describe_neffs(record: Record) -> list[str]:
    """One line per NEFF, or the one line that says why there is none. Never claims a NEFF that is not there."""
    job = JobView.of(record)
    if job.no_neff_by_design:
        return [f"{NO_NEFF_NOTE}: the CPU check traced the module with torch.jit.trace; nothing was compiled"]
    if not job.neffs:
        return [f"no NEFF: {job.neff_note or 'none was found under the job directory'}"]
    return [f"NEFF {n['path']} ({human_bytes(n.get('size'))}, sha256 {str(n.get('sha256'))[:12]})" for n in job.neffs]


def neff_cell(record: Record) -> str:
    """The NEFF column of a bucket table (a cache hit says so)."""
    job = JobView.of(record)
    return _neff_cell(job) + " (cached)" if job.cache_hit else _neff_cell(job)


def _neff_cell(job: JobView) -> str:
    if job.no_neff_by_design:
        return NO_NEFF_NOTE
    if not job.neffs:
        return "no NEFF"
    return ", ".join(human_bytes(n.get("size")) for n in job.neffs)


def failure_sentence(record: Record) -> str:
    """What went wrong, cause first: the first error's code and message, then the job's reason."""
    job = JobView.of(record)
    reason = job.reason or str(job.outcome or "failed")
    error = job.error or {}
    message = str(error.get("message") or "").split("\n", 1)[0]
    if not message:
        return reason
    code = error.get("code")
    head = f"[{code}] {message}" if code and code not in message else message
    return head if message in reason else f"{head} ({reason})"


def first_error_lines(error: dict[str, Any] | None) -> list[str]:
    if not error:
        return []
    message = str(error.get("message"))
    code = f"[{error['code']}] " if error.get("code") and error["code"] not in message else ""
    out = [f"first error: {code}{message}"]
    if error.get("help"):
        out.append(f"  ({error['help']})")
    # The frames of the workbench's own code (and of libraries) stay in job.log; a terminal gets the rest.
    out += [f"    {line}" for line in without_foreign_frames(list(error.get("before") or []))]
    out.append(f"  > {error.get('line')}")
    out += [f"    {line}" for line in without_foreign_frames(list(error.get("after") or []))]
    return out


def summary_lines(record: Record, job_dir: str | None = None) -> list[str]:
    """The end-of-job summary."""
    job = JobView.of(record)
    outcome = job.outcome
    took = f" in {job.duration_s:.1f} s" if job.duration_s is not None else ""
    head = f"{job.job_id}: {outcome.upper() if outcome != 'succeeded' and outcome else outcome}{took}"
    if job.reason:
        head += f": {job.reason}"
    lines = [head]
    if job.cache_hit:
        saved = job.cache.get("saved_s")
        took = f"{saved:.1f} s of compiling saved; " if isinstance(saved, (int, float)) else ""
        lines.append(f"  served from the cache of {job.cache.get('from')} ({took}no worker ran)")
    if job.backend:
        lines.append(f"  backend {job.backend}: {job.backend_reason}")
    lines += [f"  {line}" for line in describe_neffs(job)]
    if job.model_pt:
        lines.append(f"  model.pt ({human_bytes(job.model_pt.get('size'))})")
    lines.append(f"  {describe_numerics(job.numerics)}")
    compiler = job.compiler
    parts = []
    if compiler.get("status"):
        parts.append(f"status {compiler['status']}")
    if compiler.get("exit_code") is not None:
        parts.append(f"exit {compiler['exit_code']} ({compiler.get('exit_explanation')})")
    if parts:
        lines.append(f"  compiler {', '.join(parts)}")
    for warning in job.warnings:
        lines.append(f"  warning: {warning}")
    if outcome != "succeeded":
        lines += [f"  {line}" for line in first_error_lines(job.error)]
    if job_dir:
        lines.append(f"  job: {job_dir}")
    return lines


def bucket_table(records: list[Record]) -> list[str]:
    """Outcome, NEFF size, time and error per bucket."""
    jobs = [JobView.of(rec) for rec in records]
    axes = list(dict.fromkeys(k for job in jobs for k in job.bucket)) or ["bucket"]
    rows = [(" ".join(axes), "outcome", "NEFF", "compile s", "job s", "error")]
    for job in jobs:
        compile_s = job.metrics.get("compile_s")
        error = job.reason or ""
        if job.error and job.error.get("code"):
            error = f"[{job.error['code']}] {error}"
        rows.append(
            (
                " ".join(str(job.bucket.get(a, "-")) for a in axes),
                str(job.outcome),
                neff_cell(job),
                f"{compile_s:.2f}" if isinstance(compile_s, (int, float)) else "-",
                f"{job.duration_s:.2f}" if job.duration_s is not None else "-",
                error[:80],
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [("  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths)) + "  " + row[-1]).rstrip() for row in rows]
