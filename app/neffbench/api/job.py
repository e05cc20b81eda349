"""A compile job as the Python API returns it: its record, what it made, and what can be done with it next."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neffbench.api import html
from neffbench.views.job import JobView

if TYPE_CHECKING:
    from neffbench.api.compare import Compare
    from neffbench.api.explanation import Explanation
    from neffbench.api.run import Run
    from neffbench.api.structure import Structure

RECORD_NAME = "job.json"


@dataclass(frozen=True)
class Tensor:
    """One tensor of a job's interface: its name (the NEFF's ``input0``...), dtype, shape and what it is to the
    module (``positions``, ``output[0]``)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    role: str | None = None


@dataclass(frozen=True)
class Job:
    """One job directory and its ``job.json``, read through :class:`neffbench.views.job.JobView` (``view``).

    ``to_json()`` is the record as written, which ``neffbench compile --json`` prints; ``run``, ``compare`` and
    ``explain`` do what ``neffbench run``, ``compare`` and ``explain`` do with it."""

    directory: Path
    view: JobView

    @classmethod
    def at(cls, job_dir: str | Path) -> Job:
        """The job in ``job_dir``; ``neffbench.views.fields.RecordError`` when its record cannot be read."""
        from neffbench.views.job_file import read_job

        path = Path(job_dir).resolve()
        return cls(path, read_job(path / RECORD_NAME))

    @classmethod
    def of(cls, result: Any) -> Job:
        """The job of a finished run of the job runner (``neffbench.jobs.JobResult``)."""
        return cls(Path(result.job_dir), result.view)

    # ---- what the record says ----

    @property
    def job_id(self) -> str:
        return self.view.job_id or self.directory.name

    @property
    def outcome(self) -> str | None:
        """``succeeded``, ``failed``, ``cancelled``, ``interrupted``, or ``running``."""
        return self.view.outcome

    @property
    def succeeded(self) -> bool:
        return self.view.outcome == "succeeded"

    @property
    def reason(self) -> str | None:
        return self.view.reason

    @property
    def backend(self) -> str | None:
        return self.view.backend

    @property
    def cached(self) -> bool:
        """Whether it was served from the cache (an identical compile's products; nothing compiled here)."""
        return self.view.cache_hit

    @property
    def neffs(self) -> list[Path]:
        """The NEFF files it made (none for cpu-check, which makes none by design)."""
        return [self.directory / n["path"] for n in self.view.neffs if isinstance(n.get("path"), str)]

    @property
    def model_pt(self) -> Path | None:
        path = self.directory / "model.pt"
        return path if self.view.model_pt and path.is_file() else None

    @property
    def numerics(self) -> dict[str, Any] | None:
        """The outputs against the eager reference (``match``, ``max_abs_error``, ...), once verified."""
        return self.view.numerics

    @property
    def origin(self) -> dict[str, Any] | None:
        """Where the spec came from when ``neffbench.trace`` derived it: the call and how its object was saved."""
        found = self.view.raw.get("origin")
        return dict(found) if isinstance(found, dict) else None

    @property
    def interface(self) -> tuple[list[Tensor], list[Tensor]]:
        """What it takes and returns, as its inputs.npz and reference.npz hold them (the NEFF's own names)."""
        from neffbench.runs import arrays

        sides: list[list[Tensor]] = []
        for name in ("inputs.npz", "reference.npz"):
            try:
                found = arrays.load(self.directory / name)
            except arrays.ArraysError:
                sides.append([])
                continue
            sides.append(
                [Tensor(n, found.dtypes.get(n, "?"), found.shape(n), found.roles.get(n)) for n in found.arrays]
            )
        return sides[0], sides[1]

    def to_json(self) -> dict[str, Any]:
        """job.json as written (what ``neffbench compile --json`` prints for the job)."""
        return dict(self.view.raw)

    # ---- what can be done with it ----

    def run(
        self,
        runtime: str = "auto",
        iterations: int = 50,
        *,
        warmup: int = 5,
        neff: str | None = None,
        on_line: Callable[[str], None] | None = None,
        **options: Any,
    ) -> Run:
        """Run and time it as ``neffbench run`` does (``runtime``: auto, nrtpy, spike, torchscript or cpu; the other
        options are ``NeffRun``'s: ``mode``, ``core``, ``random``, ``seed``, ``steps``, ``timeout``, ...)."""
        from neffbench.api.run import run_job

        return run_job(self.directory, runtime, iterations, warmup=warmup, neff=neff, on_line=on_line, **options)

    def compare(
        self,
        taps: Sequence[str] = (),
        *,
        depth: int | None = None,
        runtime: str = "auto",
        cache: bool = True,
        on_line: Callable[[str], None] | None = None,
    ) -> Compare:
        """Where its outputs diverge, tap by tap, as ``neffbench compare`` says it."""
        from neffbench.api.compare import compare_job

        return compare_job(self.directory, taps, depth=depth, runtime=runtime, cache=cache, on_line=on_line)

    def explain(self) -> Explanation:
        """Its outcome and cause, with its compiler log explained, as ``neffbench explain JOB`` says it."""
        from neffbench.api.explanation import Explanation

        return Explanation.of(self.directory)

    def structure(self, depth: int | None = None, *, on_line: Callable[[str], None] | None = None) -> Structure:
        """Its model's modules in call order with shapes, parameters, FLOPs and the latest compare's error and
        profile's device time on each, as ``neffbench structure JOB`` shows them (``depth``: levels shown)."""
        from neffbench.api.structure import Structure

        return Structure.of(self.directory, depth, on_line)

    # ---- in a notebook ----

    def __repr__(self) -> str:
        cached = ", cached" if self.cached else ""
        return f"<Job {self.job_id}: {self.outcome} ({self.backend}{cached})>"

    def _repr_html_(self) -> str:
        from neffbench.jobs.summary import describe_neffs, describe_numerics

        job = self.view
        ok = None if job.outcome in (None, "running") else job.outcome == "succeeded"
        verdict = (job.outcome or "?") + (" (served from the cache)" if self.cached else "")
        facts = [("backend", job.backend), ("directory", self.directory)]
        if job.reason:
            facts.append(("reason", job.reason))
        facts += [("NEFF", "; ".join(describe_neffs(job))), ("numerics", describe_numerics(job.numerics))]
        inputs, outputs = self.interface
        rows = [("in", t.name, t.role or "", t.dtype, list(t.shape)) for t in inputs]
        rows += [("out", t.name, t.role or "", t.dtype, list(t.shape)) for t in outputs]
        interface = html.table(["", "name", "is", "dtype", "shape"], rows) if rows else ""
        return html.block(html.heading(f"job {self.job_id}", verdict, ok), html.pairs(facts), interface)


class JobList(list):  # type: ignore[type-arg]
    """Jobs, newest first: a list that shows itself as a table and offers ``to_pandas()``."""

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "job_id": j.job_id,
                "outcome": j.outcome,
                "backend": j.backend,
                "cached": j.cached,
                "created": j.view.created,
                "duration_s": j.view.duration_s,
                "neffs": len(j.neffs),
                "max_abs_error": (j.numerics or {}).get("max_abs_error"),
                "directory": str(j.directory),
            }
            for j in self
        ]

    def to_pandas(self) -> Any:
        from neffbench.api.frames import frame

        return frame(self.rows())

    def _repr_html_(self) -> str:
        rows = self.rows()
        keys = ["job_id", "outcome", "backend", "cached", "created", "duration_s", "neffs", "max_abs_error"]
        return html.table(keys, [[r[k] for k in keys] for r in rows]) if rows else "<i>no jobs</i>"


def jobs(workdir: str | Path = "neffbench-workdir") -> JobList:
    """Every job in ``workdir``, newest first (jobs left running by a process that is gone are marked interrupted
    first, as ``neffbench list`` does); a folder whose job.json cannot be read is left out."""
    from neffbench.jobs.records import mark_interrupted
    from neffbench.views.fields import RecordError

    root = Path(workdir)
    if not root.is_dir():
        return JobList()
    mark_interrupted(root)
    found = []
    for record in root.glob(f"*/{RECORD_NAME}"):
        try:
            found.append(Job.at(record.parent))
        except (RecordError, OSError):
            continue
    return JobList(sorted(found, key=lambda j: j.view.created or "", reverse=True))
