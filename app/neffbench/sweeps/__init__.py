"""Sweeps: compile a grid of spec fields as ordinary jobs, here or on a Ray cluster, and compare the points side by side.

The API the CLI and the window use (stable; plain Python, no Qt, Ray imported only by the ray executor):

``plan(spec, overs, *, zip=False, backend="auto", memory_per_job=None) -> SweepPlan``
    ``overs`` is ``["compiler.optlevel=1,2", "inputs.num_tokens=1,8"]`` or ``{"compiler.optlevel": [1, 2]}``
    (string values are read by the field's type, as on the command line). Never raises for bad input:
    ``plan.problems`` (a list of :class:`~neffbench.spec.Problem`) says what is wrong with the grid itself
    (then it has no points). ``plan.points`` are :class:`Point` s: ``index``, ``values`` (field -> value),
    ``bucket``, ``spec`` (single-bucket, None when invalid), ``problems``, ``valid``, ``memory``
    (:class:`~neffbench.jobs.memory_estimate.Estimate`: ``bytes``, ``source``, ``text()``) and ``label(short)``
    (``optlevel=1 num_tokens=8``) or ``words(labels)`` (``Opt level 1, Tokens 8``, for the window).
    ``plan.count``, ``plan.valid``, ``plan.invalid``, ``plan.memory_bytes`` (largest estimate),
    ``plan.short_names`` (field -> column name). Each bucket of a combination is its own point.

``sweepable(spec) -> list[SweepField]``
    The fields a sweep can vary (``name``, ``type``, ``label``, ``help``, ``choices``, ``current``).

``run_sweep(plan, *, executor="local"|"ray", jobs=None, address=None, backend="auto", workdir=None,
timeout=None, use_cache=True, strict=False, shared_workdir=False, cpus_per_job=1, runtime_env=None,
on_line=None, on_event=None, cancel_event=None, on_record=None) -> SweepResult``
    Blocks until every point has ended; call it off the GUI thread. Set ``cancel_event`` to cancel every
    job (and, on Ray, every task and the processes behind it). Raises :class:`SweepError` (nothing
    started) or ``neffbench.jobs.WorkdirError``. ``jobs``: local, workers at once (default 1); Ray, tasks
    in flight at most (default: as the cluster's resources allow). ``runtime_env`` is Ray's, for every task.
    ``executor`` may also be an executor object (``prepare()``, ``run(tasks, tracker, options, cancel_event)``,
    ``close()``), such as ``local.LocalExecutor(jobs, limiter=limiter.MemoryLimiter(...))``. ``on_record(path)`` hears where
    ``sweep.json`` is as soon as it exists. ``SweepResult``: ``sweep_id``, ``path`` (sweep.json), ``state``
    (succeeded|failed|cancelled), ``record`` (the final sweep.json), ``exit_code`` (0, 1, 130).

    ``on_line(point, text)``: each log line, ``point`` the index (None for the sweep's own lines).
    ``on_event(event)``: every job event of :mod:`neffbench.jobs.protocol` with ``point`` and ``sweep_id``
    added, and the sweep's own:

    - ``{"type": "sweep_started", "path", "points", "valid", "executor", "workdir"}``
    - ``{"type": "sweep_point", "point", "state", "label", "reason", "job_id", "cached", "node", "attempt",
      "peak_rss_bytes", "duration_s"}`` at every change of a point's state: pending, waiting (for memory),
      running, succeeded, failed, cancelled, interrupted (invalid points never change)
    - ``{"type": "sweep_node", "node", "versions", "differs"}`` when a Ray node runs its first task
    - ``{"type": "sweep_finished", "state", "counts", "path"}``: always the last

    Callbacks run on the sweep's threads (local: one per running job; Ray: the client's loop). On Ray a job's
    own events also carry ``node``, and their ``job_dir`` is the node's; the job is in the client's workdir
    (``job_id``) once its point has ended.

``load(workdir, sweep_id) -> dict``, ``list_sweeps(workdir) -> list[dict]``
    A sweep's ``sweep.json`` (id, a unique start of it, its folder or the file), with ``path``.

``rows(sweep) -> list[dict]``, ``table_lines(sweep) -> list[str]``
    The comparison table: per point its swept values, outcome, compile and job time, peak memory, NEFF
    size, numerics and the latest run's latency (see :mod:`neffbench.sweeps.show`).

``layers.attach(rows)``, ``layers.figure(row, path, name)``, ``layers.table_lines(rows, path)``
    Each point's figures at every module of its model (device time and share, error against eager and float64), as
    ``neffbench structure`` lays them (see :mod:`neffbench.sweeps.layers`).
"""

from __future__ import annotations

from neffbench.sweeps.errors import SweepError
from neffbench.sweeps.fields import SweepField, sweepable
from neffbench.sweeps.grid import Axis, PlanError, Point, SweepPlan, plan, words_of
from neffbench.sweeps.record import SweepNotFound, list_sweeps, load
from neffbench.sweeps.show import as_json, rows, table_lines
from neffbench.sweeps.sweep import EXECUTORS, SweepResult, run_sweep

__all__ = [
    "EXECUTORS",
    "Axis",
    "PlanError",
    "Point",
    "SweepError",
    "SweepField",
    "SweepNotFound",
    "SweepPlan",
    "SweepResult",
    "as_json",
    "list_sweeps",
    "load",
    "plan",
    "rows",
    "run_sweep",
    "sweepable",
    "table_lines",
    "words_of",
]
