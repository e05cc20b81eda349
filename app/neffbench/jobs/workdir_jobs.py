"""A workdir's jobs as the Artifacts tab lists them (its NEFFs from the index, plus jobs that made none), and
deleting one of them (never a running job's)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from neffbench.targets import codename_label
from neffbench.views.fields import NewerRecordError, RecordError
from neffbench.views.job import JobView
from neffbench.views.job_file import read_job
from neffbench.views.workdir import NeffRecord, scan_workdir


@dataclass(frozen=True)
class Artifact:
    """One row: a NEFF (``neff`` set) or a job without a NEFF (cpu-check, failed, cancelled)."""

    neff: NeffRecord | None
    job: JobView | None  # None when there is no job.json, or job_error says why it could not be read
    job_dir: Path | None
    job_error: str | None = None

    @property
    def key(self) -> str:
        return self.neff.path if self.neff else str(self.job_dir)

    @property
    def name(self) -> str:
        return Path(self.neff.path).name if self.neff else "(no NEFF)"

    @property
    def job_id(self) -> str:
        if self.job and self.job.job_id:
            return self.job.job_id
        return self.job_dir.name if self.job_dir else ""

    @property
    def outcome(self) -> str:
        return (self.job.outcome if self.job else None) or ("no job.json" if self.neff else "?")

    @property
    def created(self) -> str:
        if self.job and self.job.created:
            return self.job.created.replace("T", " ").rstrip("Z")[:19]
        return self.neff.modified.replace("T", " ").rstrip("Z") if self.neff else ""

    @property
    def size(self) -> int | None:
        return self.neff.size if self.neff else None

    @property
    def io(self) -> str:
        if self.neff is None:
            return (self.job.neff_note or self.job.reason or "") if self.job is not None else ""
        if self.neff.info is None:
            return f"unreadable: {self.neff.error}"
        return self.neff.info.io_summary(self.job.interface_names if self.job is not None else None)

    @property
    def variant_of(self) -> str | None:
        """The job id this internal variant (a compare's tapped job, a profiled one) belongs to; None for a job."""
        return self.job.variant_of if self.job is not None else None

    @property
    def compiler_version(self) -> str:
        if self.neff and self.neff.info:
            return self.neff.info.compiler_version or "?"
        return ""

    @property
    def target(self) -> str:
        """What the NEFF was compiled for as users name it, with its codename: ``trn2 (cayman)``."""
        if self.neff and self.neff.info:
            return codename_label(self.neff.info.target) if self.neff.info.target else "?"
        return ""


def scan(workdir: str | Path) -> list[Artifact]:
    """Every NEFF below the workdir and every job directory that holds none, newest first.

    Runs on a worker thread: it reads files. A missing workdir is an empty list.
    """
    root = Path(workdir)
    if not root.is_dir():
        return []
    from neffbench.jobs.records import mark_interrupted

    # Jobs whose process is gone (a crash, a kill) read as interrupted, never as running forever.
    try:
        mark_interrupted(root)
    except OSError:
        pass
    rows: list[Artifact] = []
    jobs_with_neffs: set[Path] = set()
    for rec in scan_workdir(root):
        job_dir = Path(rec.job_path).parent if rec.job_path else None
        if job_dir is not None:
            jobs_with_neffs.add(job_dir)
        rows.append(Artifact(rec, rec.job, job_dir, rec.job_error))
    others = []
    for job_json in root.glob("*/job.json"):
        job_dir = job_json.parent
        if job_dir in jobs_with_neffs:
            continue
        try:
            job, error = read_job(job_json), None
        except RecordError as exc:
            job, error = None, str(exc)
        others.append(Artifact(None, job, job_dir, error))
    # A stable sort: the NEFFs of one job keep the order the NEFF scan gave them.
    return sorted(rows + others, key=lambda a: a.created, reverse=True)


def grouped(artifacts: list[Artifact]) -> list[tuple[Artifact, list[Artifact]]]:
    """Each row with the internal variants of its job under it (its first row, for a job of several NEFFs), in
    the order given; a variant whose job is not listed stands on its own."""
    first: dict[str, Artifact] = {}
    for art in artifacts:
        if art.variant_of is None:
            first.setdefault(art.job_id, art)
    children: dict[int, list[Artifact]] = {id(a): [] for a in first.values()}
    groups: list[tuple[Artifact, list[Artifact]]] = []
    for art in artifacts:
        owner = first.get(art.variant_of) if art.variant_of is not None else None
        if owner is not None:
            children[id(owner)].append(art)
        else:
            groups.append((art, children.get(id(art), [])))
    return groups


def delete_job(workdir: str | Path, job_dir: str | Path) -> None:
    """Remove a job directory, refusing anything that is not a finished job directly inside the workdir."""
    root, target = Path(workdir).resolve(), Path(job_dir).resolve()
    if target.parent != root or not (target / "job.json").is_file():
        raise ValueError(f"{target} is not a job directory of {root}")
    try:
        job: JobView | None = read_job(target / "job.json")
    except NewerRecordError as exc:  # whether a newer neffbench's job is still running cannot be told here
        raise ValueError(str(exc)) from None
    except RecordError:
        job = None  # a broken record tells of no running process: the directory may go
    if job is not None and job.outcome == "running":
        from neffbench.jobs.records import process_alive

        if process_alive(job.pid, job.pid_start):
            raise ValueError(f"{target.name} is still running")
    if os.path.islink(target):
        raise ValueError(f"{target} is a symbolic link")
    shutil.rmtree(target)
