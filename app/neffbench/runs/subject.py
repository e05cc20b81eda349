"""What a run runs: a job directory or a NEFF file, with the job's NEFF, inputs, reference, tolerance and bucket."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.runs.arrays import INPUTS_NAME, REFERENCE_NAME
from neffbench.views.job import JobView, RecordError

RUNS_DIR = "runs"


class SubjectError(ValueError):
    """Nothing runnable at the path given; one sentence saying why."""


@dataclass
class RunSubject:
    """Paths only (read in the parent, cheaply); the child loads what they point at."""

    neff: Path | None  # None for a cpu-check job, which made no NEFF
    job_dir: Path | None
    record: dict[str, Any] = field(default_factory=dict)
    runs_dir: Path = Path(RUNS_DIR)

    @property
    def inputs(self) -> Path | None:
        return self._job_file(INPUTS_NAME)

    @property
    def reference(self) -> Path | None:
        return self._job_file(REFERENCE_NAME)

    @property
    def model_pt(self) -> Path | None:
        return self._job_file("model.pt")

    @property
    def job(self) -> JobView:
        """The job record's view (an empty one for a NEFF without a job)."""
        return JobView.of(self.record)

    @property
    def spec(self) -> dict[str, Any] | None:
        return self.job.spec

    @property
    def backend(self) -> str | None:
        return self.job.backend

    @property
    def tolerance(self) -> tuple[float, float, str] | None:
        numerics = self.job.numerics or {}
        if isinstance(numerics.get("atol"), (int, float)) and isinstance(numerics.get("rtol"), (int, float)):
            return float(numerics["atol"]), float(numerics["rtol"]), str(numerics.get("tolerance_basis"))
        return None

    def _job_file(self, name: str) -> Path | None:
        if self.job_dir is None:
            return None
        path = self.job_dir / name
        return path if path.is_file() else None

    @property
    def job_warning(self) -> str | None:
        """What a run must say of a job that did not succeed: its NEFF (if any) is run, but not as a good one."""
        outcome = self.job.outcome
        if self.job_dir is None or outcome in (None, "succeeded"):
            return None
        verb = {
            "failed": "failed",
            "cancelled": "was cancelled",
            "interrupted": "was interrupted",
            "running": "is still running",
        }.get(outcome, f"ended {outcome}")
        return f"the job that made this {verb}: {self.job.reason or 'no reason recorded'}"

    @property
    def no_neff_reason(self) -> str:
        """Why there is no NEFF to load, in the job's own terms."""
        backend = self.job.backend_class
        by_design = backend.no_neff_reason() if backend is not None else None
        if by_design:
            return by_design
        if self.job.outcome not in (None, "succeeded"):
            return f"the job ended {self.job.outcome} before making one: {self.job.reason}"
        return "the job recorded no NEFF"

    def describe(self) -> str:
        if self.neff is not None:
            return str(self.neff)
        return f"{self.job_dir} (no NEFF: {self.job.backend} job)"


def _bare_runs_dir(neff: Path) -> Path:
    """Beside the NEFF when its folder is writable; otherwise (a read-only share) under the current
    folder, named for the NEFF and its content so two NEFFs of one name do not mix."""
    import hashlib
    import os
    import stat

    # The write bit, not os.access: root may write anywhere, but a folder without write bits
    # (a read-only copy of shared samples) is not meant to receive anything.
    mode = neff.parent.stat().st_mode
    if mode & stat.S_IWUSR and os.access(neff.parent, os.W_OK):
        return neff.with_name(f"{neff.stem}.runs")
    digest = hashlib.sha256(str(neff).encode()).hexdigest()[:8]
    return Path.cwd() / "neffbench-runs" / f"{neff.stem}-{digest}"


def _read_record(job_dir: Path) -> dict[str, Any]:
    try:
        record = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SubjectError(f"{job_dir} has no job.json: it is not a job directory.") from None
    except (OSError, ValueError) as exc:
        raise SubjectError(f"{job_dir}/job.json cannot be read: {exc}.") from None
    if not isinstance(record, dict):
        raise SubjectError(f"{job_dir}/job.json does not hold a job record.")
    try:
        JobView.of(record, f"{job_dir}/job.json")
    except RecordError as exc:
        raise SubjectError(f"{exc}.") from None
    return record


def resolve(path: str | Path, *, neff: str | None = None) -> RunSubject:
    """A job directory (its NEFF, or ``neff`` among several) or a NEFF file (with the job above it, if any)."""
    p = Path(path).expanduser().resolve()
    if p.is_dir():
        record = _read_record(p)
        job = JobView.of(record)
        neffs = [n["path"] for n in job.neffs if isinstance(n.get("path"), str) and n["path"]]
        if neff is not None:
            if neff not in neffs:
                raise SubjectError(f"--neff {neff} is not one of the job's NEFFs ({', '.join(neffs) or 'none'}).")
            neffs = [neff]
        if len(neffs) > 1:
            raise SubjectError(f"the job has {len(neffs)} NEFFs ({', '.join(neffs)}); pick one with --neff.")
        chosen = p / neffs[0] if neffs else None
        if chosen is not None and not chosen.is_file():
            raise SubjectError(f"the job's NEFF {chosen} is gone.")
        if job.outcome not in ("succeeded", "failed", "interrupted", None) and chosen is None:
            raise SubjectError(f"the job in {p} is {job.outcome} and made no NEFF.")
        return RunSubject(chosen, p, record, p / RUNS_DIR)
    if p.is_file():
        from neffbench.neff.index import find_job

        job_json = find_job(p)
        if job_json is not None:
            job_dir = Path(job_json).parent
            return RunSubject(p, job_dir, _read_record(job_dir), job_dir / RUNS_DIR)
        return RunSubject(p, None, {}, _bare_runs_dir(p))
    raise SubjectError(f"{p} does not exist.")
