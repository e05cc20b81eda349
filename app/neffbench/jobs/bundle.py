"""A bug-report bundle: one zip of what a compiler team needs to reproduce a job, from inside its directory only."""

from __future__ import annotations

import datetime as _dt
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.jobs import bundle_readme as readme
from neffbench.jobs import bundle_sources
from neffbench.jobs.bundle_plan import DEFAULT_LIMIT, MIB, Plan, make_plan
from neffbench.jobs.home_paths import BLOCK, HomeShortener
from neffbench.procs import replacing
from neffbench.views.job import JobView

__all__ = ["DEFAULT_LIMIT", "MIB", "BundleError", "BundleResult", "find_job_dir", "job_root", "make_bundle"]

DEFAULT_WORKDIR = "neffbench-workdir"  # where the workbench window and the presets compile by default


class BundleError(Exception):
    """No bundle could be made; the message is one sentence saying why."""


@dataclass
class BundleResult:
    path: Path
    included: list[tuple[str, int]] = field(default_factory=list)  # zip member name, bytes
    left_out: list[tuple[str, int, str]] = field(default_factory=list)  # path in the job, bytes, why
    missing: list[str] = field(default_factory=list)  # expected in a job directory but not in this one

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "size": self.path.stat().st_size,
            "included": [{"name": n, "size": s} for n, s in self.included],
            "left_out": [{"path": p, "size": s, "reason": r} for p, s, r in self.left_out],
            "missing": list(self.missing),
        }


def job_root(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise BundleError(f"{p} does not exist.")
    if not p.is_dir():
        raise BundleError(f"{p} is not a directory.")
    if not (p / "job.json").is_file():
        raise BundleError(f"{p} has no job.json: it is not a job directory.")
    return p.resolve()


def find_job_dir(job: str | Path, workdir: str | Path | None = None) -> Path:
    """A job directory, its job.json, a NEFF inside it, or a job id (or its unique start) in ``workdir``."""
    p = Path(job).expanduser()
    if not os.path.lexists(p) and (workdir is not None or len(p.parts) == 1):
        root = Path(workdir if workdir is not None else DEFAULT_WORKDIR).expanduser()
        if not root.is_dir():
            if workdir is not None:
                raise BundleError(f"the workdir {root} is not a directory.")
            raise BundleError(f"{job} does not exist: give a job directory, or a job id with --workdir DIR.")
        p = root / str(job)
        if not p.is_dir():
            found = sorted(d.name for d in root.iterdir() if d.name.startswith(str(job)) and (d / "job.json").is_file())
            if not found:
                raise BundleError(f"no job {job} in {root}.")
            if len(found) > 1:
                names = ", ".join(found[:4]) + (", ..." if len(found) > 4 else "")
                raise BundleError(f"{job} matches {len(found)} jobs in {root} ({names}): give more of it.")
            p = root / found[0]
    if p.is_file() and p.name == "job.json":
        p = p.parent
    elif p.is_file() and p.suffix == ".neff":
        from neffbench.neff.index import find_job  # the lookup `neffbench run FILE.neff` uses

        record = find_job(p)
        if record is None:
            raise BundleError(f"{p} has no job.json above it: it was not made by a neffbench job.")
        p = record.parent
    elif p.is_file():
        raise BundleError(f"{p} is a file, not a job directory.")
    return job_root(p)


def _output(root: Path, out: str | Path | None, job_id: str, force: bool) -> Path:
    name = f"{job_id}-bugreport.zip"
    target = root.parent / name if out is None else Path(out).expanduser().absolute()
    if target.is_dir():
        target = target / name
    parent = target.parent
    if not parent.is_dir():
        raise BundleError(f"the output folder {parent} does not exist.")
    if (parent.resolve() / target.name).is_relative_to(root):
        raise BundleError(f"{target} is inside the job directory; write the bundle outside it.")
    # The write bits too, not only os.access: root may write anywhere, but a folder without them is not meant to.
    if not (parent.stat().st_mode & 0o222 and os.access(parent, os.W_OK | os.X_OK)):
        raise BundleError(f"the output folder {parent} is not writable.")
    if os.path.lexists(target) and not force:
        raise BundleError(f"{target} already exists; pass --force to replace it.")
    return target


def _read_record(root: Path) -> tuple[JobView, str | None]:
    from neffbench.views.job_file import RecordError, read_job

    try:
        return read_job(root / "job.json"), None
    except RecordError as exc:  # a broken record is worth reporting too: bundle what there is
        return JobView.of({}), str(exc)


def make_bundle(
    job_dir: str | Path, out: str | Path | None = None, *, size_limit: int = DEFAULT_LIMIT, force: bool = False
) -> BundleResult:
    """Write the bundle of ``job_dir`` (default ``<job_id>-bugreport.zip`` beside it); BundleError says why not."""
    root = job_root(job_dir)
    job, problem = _read_record(root)
    job_id = job.job_id
    # It names the zip and its folder: only a plain file name will do, else the directory's own name.
    if not (job_id is not None and re.fullmatch(r"[\w.+-]+", job_id) and job_id.strip(".")):
        job_id = root.name
    target = _output(root, out, job_id, force)
    rerun = f"neffbench bundle {root}" + ("" if out is None else f" --out {target}")
    plan = make_plan(root, job, size_limit, lambda mib: f"rerun `{rerun} --max-size {mib} --force` to include it")
    sources, left_out = bundle_sources.plan_sources(job, size_limit)  # the user's files, outside the job
    plan.files += sources
    plan.left_out += left_out
    try:
        with replacing(target) as tmp, open(tmp, "wb") as fh:  # a crash never leaves a half zip under the name
            result = _write(fh, job, problem, root, plan, job_id)
    except OSError as exc:
        raise BundleError(f"cannot write {target}: {exc.strerror or exc}.") from None
    result.path = target
    return result


def _write(fh: Any, job: JobView, problem: str | None, root: Path, plan: Plan, job_id: str) -> BundleResult:
    shortener = HomeShortener()
    result = BundleResult(Path(), left_out=plan.left_out, missing=plan.missing)
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel, real, st in plan.files:
            try:
                src = open(real, "rb", buffering=0, opener=lambda p, f: os.open(p, f | getattr(os, "O_NOFOLLOW", 0)))
            except OSError as exc:
                result.left_out.append((rel, st.st_size, f"cannot be read: {exc.strerror or exc}"))
                continue
            with src:
                now = os.fstat(src.fileno())
                if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):  # swapped (for a link?) since it was checked
                    result.left_out.append((rel, st.st_size, "it changed while bundling"))
                    continue
                info = zipfile.ZipInfo.from_file(real, f"{job_id}/{rel}", strict_timestamps=False)
                info.compress_type = zipfile.ZIP_DEFLATED
                with zf.open(info, "w", force_zip64=st.st_size > (1 << 30)) as dst:
                    # The user's sources stay byte for byte what job.json's sha256 says.
                    if rel.endswith(readme.TEXT_SUFFIXES) and not rel.startswith(f"{bundle_sources.FOLDER}/"):
                        size = shortener.copy(src, dst)  # type: ignore[arg-type]
                    else:
                        size = _copy(src, dst)
            result.included.append((info.filename, size))
        made = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name, text in (
            (readme.COMMAND_NAME, readme.command_text(job)),
            (readme.VERSIONS_NAME, readme.versions_text(job)),
        ):
            if text is not None:
                result.included.append(_add_text(zf, f"{job_id}/{name}", shortener.text(text)))
        text = readme.readme_text(
            job=job,
            record_problem=problem,
            job_dir=root,
            root=job_id,
            included=result.included,
            left_out=result.left_out,
            missing=result.missing,
            skipped=(len(plan.skipped), sum(plan.skipped)),
            made=made,
        )
        result.included.append(_add_text(zf, f"{job_id}/{readme.README_NAME}", shortener.text(text)))
    return result


def _copy(src: Any, dst: Any) -> int:
    written = 0
    while block := src.read(BLOCK):
        dst.write(block)
        written += len(block)
    return written


def _add_text(zf: zipfile.ZipFile, name: str, text: str) -> tuple[str, int]:
    data = text.encode("utf-8")
    info = zipfile.ZipInfo(name, date_time=_dt.datetime.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)
    return name, len(data)
