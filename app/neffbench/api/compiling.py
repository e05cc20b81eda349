"""``neffbench.compile`` and ``neffbench.neffs``: a spec's jobs, and a folder's NEFFs, as ``neffbench compile`` and
``neffbench list`` make and read them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.api import html
from neffbench.api.job import Job, JobList


def _spec_of(source: Any, example_inputs: Any, workdir: str | Path | None) -> Any:
    """A spec from what ``compile`` was given: a spec, a spec file, a preset, a module entry, or an object."""
    import dataclasses

    from neffbench.presets import resolve_spec_source

    if isinstance(source, (str, Path)) and example_inputs is None:
        spec = resolve_spec_source(str(source))
    elif dataclasses.is_dataclass(source) and hasattr(type(source), "kernel"):
        spec = source
    elif example_inputs is None:
        raise TypeError("compile() of an object needs its example_inputs, as neffbench.trace does")
    else:
        from neffbench.api.compiler_args import compiler_spec
        from neffbench.api.derive import derive
        from neffbench.api.tracing import DEFAULT_WORKDIR, spec_for

        folder = Path(workdir or DEFAULT_WORKDIR)
        spec = spec_for(source, derive(source, example_inputs, folder, trace=False), compiler_spec(None)[0], folder)
    return dataclasses.replace(spec, workdir=str(workdir)) if workdir is not None else spec


def compile(
    source: Any,
    example_inputs: Any = None,
    *,
    backend: str = "auto",
    workdir: str | Path | None = None,
    jobs: int = 1,
    cache: bool = True,
    timeout: float | None = None,
    on_line: Callable[[str], None] | None = None,
) -> JobList:
    """Compile ``source`` as ``neffbench compile`` does: one job per bucket, returned in bucket order.

    ``source``: a spec object, a spec file, a preset name, a module entry (``"file.py:NAME"``), or an object with
    its ``example_inputs`` (saved as ``neffbench.trace`` saves it). Raises ``neffbench.spec.SpecError`` with every
    problem of an invalid spec (nothing started), and ValueError when the entry cannot be built; a failed job is
    returned like any other (``job.outcome``, ``job.explain()``). Ctrl-C cancels the jobs, then raises
    KeyboardInterrupt."""
    from neffbench.api.waiting import waited
    from neffbench.jobs import run_buckets
    from neffbench.jobs.prepare import prepare
    from neffbench.jobs.records import prepare_workdir
    from neffbench.probe.client import ask
    from neffbench.spec import SpecError, errors

    spec = _spec_of(source, example_inputs, workdir)
    problems = errors(spec)
    if problems:
        raise SpecError(problems)
    prepare_workdir(spec.workdir)
    prepared = prepare(spec, spec.workdir, ask)
    if prepared.problems:
        raise ValueError(f"the module cannot be built: {'; '.join(prepared.problems)}")
    say = on_line or (lambda line: print(line, flush=True))
    cancel = threading.Event()

    def work() -> list[Any]:
        return run_buckets(
            spec,
            backend=backend,
            jobs=jobs,
            timeout=timeout,
            on_line=say,
            cancel_event=cancel,
            use_cache=cache,
            prepared=prepared,
        )

    results = waited(work, cancel.set, name="neffbench-compile", say=say)
    return JobList(Job.of(r) for r in results)


@dataclass(frozen=True)
class Neff:
    """One NEFF below a folder with the job that built it (``neffbench.views.workdir.NeffRecord``, ``record``);
    ``to_json()`` is its entry in ``neffbench list --json``."""

    record: Any

    @property
    def path(self) -> Path:
        return Path(self.record.path)

    @property
    def job(self) -> Job | None:
        view = self.record.job
        return Job(view.directory, view) if view is not None and view.directory is not None else None

    def to_json(self) -> dict[str, Any]:
        return dict(self.record.to_dict())

    def __repr__(self) -> str:
        return (
            f"<Neff {self.record.rel_path}: {self.record.info.io_summary() if self.record.info else self.record.error}>"
        )

    def _repr_html_(self) -> str:
        data = self.to_json()
        job = data.get("job") or {}
        facts = [(k, data.get(k)) for k in ("name", "target", "lnc_size", "compiler_version", "size", "modified")]
        facts.append(("job", f"{job.get('job_id')} ({job.get('outcome')})" if job else "none found"))
        rows = [("in", t["name"], t["dtype"], t["shape"]) for t in data.get("inputs") or []]
        rows += [("out", t["name"], t["dtype"], t["shape"]) for t in data.get("outputs") or []]
        error = data.get("error")
        return html.block(
            html.heading(
                f"NEFF {data.get('path')}", data.get("io") or str(error or ""), None if error is None else False
            ),
            html.pairs(facts),
            html.table(["", "name", "dtype", "shape"], rows) if rows else "",
        )


class NeffList(list):  # type: ignore[type-arg]
    """NEFFs, newest first: a list that shows itself as ``neffbench list``'s table and offers ``to_pandas()``."""

    def rows(self) -> list[dict[str, Any]]:
        keys = ("path", "size", "modified", "name", "target", "io")
        out = []
        for n in self:
            data = n.to_json()
            row = {k: data.get(k) for k in keys}
            row["job"] = (data.get("job") or {}).get("outcome")
            out.append(row)
        return out

    def to_pandas(self) -> Any:
        from neffbench.api.frames import frame

        return frame(self.rows())

    def _repr_html_(self) -> str:
        rows = self.rows()
        keys = ["path", "size", "modified", "name", "target", "io", "job"]
        return html.table(keys, [[r[k] for k in keys] for r in rows]) if rows else "<i>no NEFF files</i>"


def neffs(folder: str | Path = "neffbench-workdir", *, header_only: bool = False) -> NeffList:
    """Every NEFF below ``folder``, newest first, as ``neffbench list`` finds them (jobs left running by a process
    that is gone are marked interrupted first); OSError for a folder that cannot be read."""
    from neffbench.jobs.records import mark_interrupted
    from neffbench.views.workdir import scan_workdir

    mark_interrupted(folder)
    return NeffList(Neff(r) for r in scan_workdir(folder, header_only=header_only))
