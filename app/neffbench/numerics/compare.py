"""``neffbench compare JOB``: where a job's outputs diverge, tap by tap, on the job's backend and a runtime.

The job's module is compiled again as its *tapped variant* (an ordinary job of its own in the same workdir,
cached like any other, its record linked to the job by ``taps_request.of``): same spec, so the same seeded
weights and inputs, with each tapped submodule's output returned as an extra output. That job's NEFF (or, for
a cpu-check job, its TorchScript) runs once on the runtime, and so does the job's own, and every tap is compared
with the eager run in the job's dtype (``reference.npz`` of the tapped job: what the compiler should have
reproduced) and with a float64 run (``reference64.npz``: what the dtype itself costs). The result is kept in
``JOB/compares/`` for the window's Numerics view.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.jobs.compile_job import CompileJob
from neffbench.jobs.records import RECORD_NAME
from neffbench.kernels import registry
from neffbench.numerics import outputs
from neffbench.numerics.kept import COMPARES_DIR
from neffbench.procs import write_json
from neffbench.runs import arrays
from neffbench.runs.neff_run import NeffRun
from neffbench.runs.subject import SubjectError, resolve
from neffbench.spec import SpecError, from_dict
from neffbench.taps import compare as taps_compare
from neffbench.taps import report
from neffbench.views.clock import iso, utc_now
from neffbench.views.job import JobView, RecordError
from neffbench.views.job_file import read_job


class CompareError(Exception):
    """A compare that cannot be made or did not finish; one sentence saying why."""


@dataclass
class CompareResult:
    document: dict[str, Any]  # the --json document
    lines: list[str]  # the text report
    path: Path  # where the document is kept (JOB/compares/...)


@dataclass
class Compare:
    """One compare of one job. ``run`` on one thread; ``cancel`` from any thread."""

    job_dir: Path
    patterns: tuple[str, ...] = ()
    depth: int | None = None
    runtime: str = "auto"
    use_cache: bool = True
    on_line: Callable[[str], None] | None = None  # the tapped compile's and the runs' output
    on_step: Callable[[str], None] | None = None  # one sentence per step, for a status line
    _current: Any = field(default=None, repr=False)
    _cancelled: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            current = self._current
        if current is not None:
            current.cancel()

    def _step(self, child: Any) -> Any:
        with self._lock:
            if self._cancelled:
                raise CompareError("cancelled")
            self._current = child
        return child

    def _say(self, sentence: str) -> None:
        if self.on_step is not None:
            self.on_step(sentence)

    # ---- the steps ------------------------------------------------------------------------------

    def run(self) -> CompareResult:
        job = self._job()
        spec = self._spec(job)
        tapped_dir = self._compile(job, spec)
        tapped = read_job(tapped_dir / RECORD_NAME)
        self._say(f"running the tapped variant on the {self.runtime} runtime")
        device, run_record = self._run(tapped_dir, "the tapped variant")
        self._say("running the job itself, to see whether the taps changed its result")
        own: dict[str, Any] | None = None
        own_error: str | None = None
        try:
            own, _ = self._run(self.job_dir, "the job")
        except CompareError as exc:
            if self._cancelled:
                raise
            own_error = str(exc)
        try:
            found = outputs.Found.of(tapped_dir, tapped, device, registry.for_spec(spec).dtype(spec))
        except (ValueError, arrays.ArraysError) as exc:
            raise CompareError(str(exc)) from None
        no_device = outputs.no_device_output(found, tapped, run_record.get("runtime") or self.runtime)
        comparison = taps_compare.compare(
            found.taps,
            found.device_taps,
            found.eager_taps,
            found.float64,
            eager_tolerance=outputs.autocast(spec),
            no_device=no_device,
        )
        notes = outputs.notes(job, tapped, found, own_error)
        changed = (
            None
            if own is None or no_device is not None  # no device output: nothing of the tapped graph was run
            else report.taps_changed_result(list(own.values()), found.device_own, found.dtype)
        )
        document = report.document(
            comparison,
            job=job.job_id or self.job_dir.name,
            tapped_job=tapped_dir.name,
            runtime=run_record.get("runtime"),
            created=iso(),
            patterns=list(self.patterns),
            depth=found.depth,
            notes=notes,
            taps_changed_result=changed,
            cached=tapped.cache_hit,
            # What the figures were computed from, for a view that draws a tap's values (its histograms).
            files={
                "device": None if no_device else (run_record.get("outputs") or {}).get("path"),
                "eager": str(tapped_dir / arrays.REFERENCE_NAME),
                "float64": str(tapped_dir / arrays.FLOAT64_REFERENCE_NAME) if isinstance(found.float64, dict) else None,
            },
            outputs={t.name: n for t, n in zip(found.taps, found.tap_outputs)},
        )
        path = self._keep(document, run_record.get("runtime") or self.runtime)
        lines = [*notes, *([changed] if changed else []), *report.lines(comparison)]
        return CompareResult(document, lines, path)

    def _job(self) -> JobView:
        try:
            job = read_job(self.job_dir / RECORD_NAME)
        except RecordError as exc:
            raise CompareError(str(exc)) from None
        of = job.taps_request.get("of")
        if of:
            raise CompareError(f"{self.job_dir.name} is a compare's tapped job; compare the job it taps ({of})")
        return job

    def _spec(self, job: JobView) -> Any:
        if job.spec is None:
            raise CompareError(f"{self.job_dir / RECORD_NAME} records no spec to build the tapped variant from")
        try:
            return from_dict(job.spec)
        except SpecError as exc:
            raise CompareError(f"the job's spec no longer loads: {exc}") from None

    def _compile(self, job: JobView, spec: Any) -> Path:
        backend = job.backend or "auto"
        self._say(f"compiling the tapped variant with the job's backend ({backend})")
        request = {"patterns": list(self.patterns), "depth": self.depth, "of": job.job_id or self.job_dir.name}
        compile_job = self._step(
            CompileJob(
                spec,
                workdir=self.job_dir.parent,
                backend=backend,
                taps=request,
                use_cache=self.use_cache,
                on_line=self.on_line,
            )
        )
        compile_job.start()
        result = compile_job.wait()
        if result.outcome != "succeeded":
            raise CompareError(
                f"the tapped variant did not compile ({result.outcome}): {result.reason or 'see its log'}; "
                f"its job: {result.job_dir}"
            )
        return Path(result.job_dir)

    def _run(self, job_dir: Path, what: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """One call of ``job_dir``'s NEFF (or TorchScript) on the runtime: its outputs by name, and the run record."""
        try:
            subject = resolve(job_dir)
        except SubjectError as exc:
            raise CompareError(f"{what} cannot be run: {exc}") from None
        neff_run = self._step(
            NeffRun(
                subject,
                runtime=self.runtime,
                iterations=1,
                warmup=0,
                save_outputs=True,
                purpose="compare",
                on_line=self.on_line,
            )
        )
        neff_run.start()
        result = neff_run.wait()
        # Outputs that differ from the reference fail a run, but are what a compare is for: once kept, they count.
        saved = (result.record.get("outputs") or {}).get("path")
        if not saved:
            raise CompareError(f"the run of {what} {result.outcome}: {result.reason or 'see its record'}")
        loaded = arrays.load(saved)
        return {n: arrays.to_tensor(a, loaded.dtypes[n]) for n, a in loaded.arrays.items()}, result.record

    def _keep(self, document: dict[str, Any], runtime: str) -> Path:
        folder = self.job_dir / COMPARES_DIR
        folder.mkdir(exist_ok=True)
        stamp = utc_now().strftime("%Y%m%dT%H%M%S.%fZ")
        path = folder / f"{stamp}-{runtime}.json"
        write_json(path, document)
        return path
