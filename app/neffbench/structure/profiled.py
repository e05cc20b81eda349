"""The NEFF a profile of a job is captured from: one compiled with the framework's debug names.

Neuron Explorer maps device time to the model's layers only for a NEFF compiled with ``XLA_IR_DEBUG=1``,
``XLA_HLO_DEBUG=1`` and ``NEURON_FRAMEWORK_DEBUG=1`` (aws-neuron-sdk
``tools/neuron-explorer/how-to-profile-workload.rst``). An ordinary job's NEFF has none, so its *profiled variant*
is compiled: the same spec, backend and options with the names on, an ordinary job of its own in the workdir
(``<name>-profiled-...``, its record's ``profiled_request.of`` naming the job), cached apart from the job's own
NEFF, as a compare's tapped variant is. The run then times the job's NEFF and profiles the variant's, with the
job's inputs (the same seeded inputs: the same spec made them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from neffbench.jobs.compile_job import CompileJob
from neffbench.jobs.records import RECORD_NAME
from neffbench.spec import SpecError, from_dict
from neffbench.views.job import JobView, RecordError
from neffbench.views.job_file import read_job


class ProfiledError(Exception):
    """No NEFF with debug names can be had for the job; one sentence saying why."""


@dataclass(frozen=True)
class ProfiledNeff:
    neff: Path
    job_dir: Path  # the job whose NEFF it is: the variant, or the job itself when it has the names
    cached: bool = False


def neff_path(job: JobView, job_dir: Path) -> Path | None:
    entry = next((n for n in job.neffs if isinstance(n.get("path"), str)), None)
    return job_dir / entry["path"] if entry else None


def with_debug_names(
    job_dir: Path, *, use_cache: bool = True, on_line: Callable[[str], None] | None = None
) -> ProfiledNeff:
    """The NEFF to profile for the job in ``job_dir``: its own when it was compiled with the debug names, else its
    profiled variant's, compiled now (or served from the cache)."""
    try:
        job = read_job(job_dir / RECORD_NAME)
    except RecordError as exc:
        raise ProfiledError(str(exc)) from None
    own = neff_path(job, job_dir)
    if job.no_neff_by_design or own is None:
        raise ProfiledError(f"{job_dir.name} made no NEFF ({job.backend or 'no backend'}): there is nothing to profile")
    if job.profiled_request:
        return ProfiledNeff(own, job_dir)
    if job.spec is None:
        raise ProfiledError(f"{job_dir / RECORD_NAME} records no spec to compile the profiled variant from")
    try:
        spec = from_dict(job.spec)
    except SpecError as exc:
        raise ProfiledError(f"the job's spec no longer loads: {exc}") from None
    compile_job = CompileJob(
        spec,
        workdir=job_dir.parent,
        backend=job.backend or "auto",
        profiled={"of": job.job_id or job_dir.name},
        use_cache=use_cache,
        on_line=on_line,
    )
    compile_job.start()
    result = compile_job.wait()
    if result.outcome != "succeeded":
        raise ProfiledError(
            f"the profiled variant did not compile ({result.outcome}): {result.reason or 'see its log'}; "
            f"its job: {result.job_dir}"
        )
    variant_dir = Path(result.job_dir)
    variant = read_job(variant_dir / RECORD_NAME)
    found = neff_path(variant, variant_dir)
    if found is None or not found.is_file():
        raise ProfiledError(f"the profiled variant {variant_dir.name} left no NEFF")
    return ProfiledNeff(found, variant_dir, cached=variant.cache_hit)
