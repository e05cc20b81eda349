"""Words for a finished job record: what it made, how its numerics compare, what went wrong; shared by CLI and GUI."""

from __future__ import annotations

from typing import Any

from neffbench.jobs.records import NO_NEFF_NOTE, bucket_of
from neffbench.usercode.errors import without_foreign_frames


def human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def outcome_label(record: dict[str, Any] | None, outcome: str | None = None) -> str:
    """``succeeded``, or ``succeeded (cached)`` for a job served from the cache."""
    outcome = outcome or (record or {}).get("outcome") or "?"
    return f"{outcome} (cached)" if ((record or {}).get("cache") or {}).get("hit") else outcome


def describe_numerics(numerics: dict[str, Any] | None) -> str:
    if not numerics:
        return "numerics: not checked (the job did not reach verification)"
    if not numerics.get("checked"):
        return f"numerics: not checked ({numerics.get('skipped_reason')})"
    verdict = "match" if numerics.get("match") else "MISMATCH"
    return (f"numerics on {numerics.get('where')}: {verdict} against the eager reference (max abs error "
            f"{numerics['max_abs_error']:.3g}, max rel error {numerics['max_rel_error']:.3g}; atol {numerics['atol']:g}, "
            f"rtol {numerics['rtol']:g} for {numerics.get('tolerance_basis')})")


def describe_neffs(record: dict[str, Any]) -> list[str]:
    """One line per NEFF, or the one line that says why there is none. Never claims a NEFF that is not there."""
    if record.get("backend") == "cpu-check":
        return [f"{NO_NEFF_NOTE}: the CPU check traced the module with torch.jit.trace; nothing was compiled"]
    neffs = record.get("neffs") or []
    if not neffs:
        return [f"no NEFF: {record.get('neff_note') or 'none was found under the job directory'}"]
    return [f"NEFF {n['path']} ({human_bytes(n.get('size'))}, sha256 {str(n.get('sha256'))[:12]})" for n in neffs]


def neff_cell(record: dict[str, Any]) -> str:
    """The NEFF column of a bucket table (a cache hit says so)."""
    if (record.get("cache") or {}).get("hit"):
        return _neff_cell(record) + " (cached)"
    return _neff_cell(record)


def _neff_cell(record: dict[str, Any]) -> str:
    if record.get("backend") == "cpu-check":
        return NO_NEFF_NOTE
    neffs = record.get("neffs") or []
    if not neffs:
        return "no NEFF"
    return ", ".join(human_bytes(n.get("size")) for n in neffs)


def failure_sentence(record: dict[str, Any]) -> str:
    """What went wrong, cause first: the first error's code and message, then the job's reason."""
    reason = record.get("reason") or str(record.get("outcome") or "failed")
    error = record.get("error") or {}
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


def summary_lines(record: dict[str, Any], job_dir: str | None = None) -> list[str]:
    """The end-of-job summary."""
    outcome = record.get("outcome")
    took = f" in {record['duration_s']:.1f} s" if record.get("duration_s") is not None else ""
    head = f"{record.get('job_id')}: {outcome.upper() if outcome != 'succeeded' else outcome}{took}"
    if record.get("reason"):
        head += f": {record['reason']}"
    lines = [head]
    cache = record.get("cache") or {}
    if cache.get("hit"):
        saved = cache.get("saved_s")
        took = f"{saved:.1f} s of compiling saved; " if isinstance(saved, (int, float)) else ""
        lines.append(f"  served from the cache of {cache.get('from')} ({took}no worker ran)")
    if record.get("backend"):
        lines.append(f"  backend {record['backend']}: {record.get('backend_reason')}")
    lines += [f"  {line}" for line in describe_neffs(record)]
    if record.get("model_pt"):
        lines.append(f"  model.pt ({human_bytes(record['model_pt'].get('size'))})")
    lines.append(f"  {describe_numerics(record.get('numerics'))}")
    compiler = record.get("compiler") or {}
    parts = []
    if compiler.get("status"):
        parts.append(f"status {compiler['status']}")
    if compiler.get("exit_code") is not None:
        parts.append(f"exit {compiler['exit_code']} ({compiler.get('exit_explanation')})")
    if parts:
        lines.append(f"  compiler {', '.join(parts)}")
    for warning in record.get("warnings") or []:
        lines.append(f"  warning: {warning}")
    if outcome != "succeeded":
        lines += [f"  {line}" for line in first_error_lines(record.get("error"))]
    if job_dir:
        lines.append(f"  job: {job_dir}")
    return lines


def bucket_table(records: list[dict[str, Any]]) -> list[str]:
    """Outcome, NEFF size, time and error per bucket."""
    buckets = [bucket_of(rec) for rec in records]
    axes = list(dict.fromkeys(k for b in buckets for k in b)) or ["bucket"]
    rows = [(" ".join(axes), "outcome", "NEFF", "compile s", "job s", "error")]
    for rec, bucket in zip(records, buckets):
        compile_s = (rec.get("metrics") or {}).get("compile_s")
        error = rec.get("reason") or ""
        if rec.get("error") and rec["error"].get("code"):
            error = f"[{rec['error']['code']}] {error}"
        rows.append((" ".join(str(bucket.get(a, "-")) for a in axes), str(rec.get("outcome")), neff_cell(rec),
                     f"{compile_s:.2f}" if isinstance(compile_s, (int, float)) else "-",
                     f"{rec['duration_s']:.2f}" if isinstance(rec.get("duration_s"), (int, float)) else "-",
                     error[:80]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [("  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths)) + "  " + row[-1]).rstrip() for row in rows]
