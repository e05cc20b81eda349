"""What differs between two jobs (outcome, spec, sources, weights, compiler commands), and between two NEFFs
together with the jobs that built them."""

from __future__ import annotations

import shlex
from collections import Counter

from neffbench.neff.diff import Difference, compare, diff_neffs, file_differences, spec_differences
from neffbench.neff.reader import NeffInfo
from neffbench.views.job import JobView

__all__ = ["diff_built", "diff_jobs"]


def diff_built(
    a: NeffInfo, b: NeffInfo, *, job_a: JobView | None = None, job_b: JobView | None = None
) -> list[Difference]:
    """The NEFFs' differences, then their jobs': a job.json on one side only is itself a difference."""
    diffs = diff_neffs(a, b)
    if job_a is None and job_b is None:
        return diffs
    if job_a is None or job_b is None:
        diffs.append(Difference("job", "job.json", job_a.path if job_a else None, job_b.path if job_b else None))
        return diffs
    return diffs + diff_jobs(job_a, job_b)


def diff_jobs(job_a: JobView, job_b: JobView) -> list[Difference]:
    """What differs between two job records: outcome and hash, spec fields, the files and library versions the
    module was built from (a changed source file is why two specs alike compile differently), its weights, and
    the compiler commands."""
    diffs = compare(
        "job",
        {"job_id": job_a.job_id, "outcome": job_a.outcome, "backend": job_a.backend, "spec_hash": job_a.spec_hash},
        {"job_id": job_b.job_id, "outcome": job_b.outcome, "backend": job_b.backend, "spec_hash": job_b.spec_hash},
    )
    diffs += spec_differences(job_a.spec or {}, job_b.spec or {})
    if job_a.sources or job_b.sources:
        diffs += [Difference("sources", name, a, b) for name, a, b in file_differences(job_a.sources, job_b.sources)]
    weights_a, weights_b = job_a.weights.get("sha256"), job_b.weights.get("sha256")
    if weights_a != weights_b:
        diffs.append(Difference("weights", "sha256", weights_a and weights_a[:12], weights_b and weights_b[:12]))
    diffs += _commands(job_a, job_b)
    return diffs


def _in_job_terms(argv: tuple[str, ...] | None, job: JobView) -> list[str] | None:
    """The command with the job's own directory written as ``<job>``: every job has its own, so
    comparing raw paths would flag every argument that names a file."""
    if argv is None:
        return None
    if job.directory is None:
        return list(argv)
    job_dir = str(job.directory)
    return [arg.replace(job_dir, "<job>") for arg in argv]


def _commands(a: JobView, b: JobView) -> list[Difference]:
    out = []
    for which, argv_a, argv_b in (
        ("requested", _in_job_terms(a.requested_command, a), _in_job_terms(b.requested_command, b)),
        ("actual", _in_job_terms(a.actual_command, a), _in_job_terms(b.actual_command, b)),
    ):
        if argv_a == argv_b:
            continue
        out.append(
            Difference(
                "compiler_command",
                which,
                shlex.join(argv_a) if argv_a is not None else None,
                shlex.join(argv_b) if argv_b is not None else None,
            )
        )
        if argv_a is not None and argv_b is not None:
            # The flags that changed, without the paths and flags both runs share.
            only_a = Counter(argv_a) - Counter(argv_b)
            only_b = Counter(argv_b) - Counter(argv_a)
            out.append(
                Difference(
                    "compiler_command",
                    f"{which} (arguments only in one)",
                    " ".join(x for x in argv_a if only_a[x]),
                    " ".join(x for x in argv_b if only_b[x]),
                )
            )
    return out
