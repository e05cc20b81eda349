"""A sweep side by side: one row per point (swept values, outcome, times, memory, NEFF, numerics, latency), for the CLI and the window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neffbench.backends import registry as backends
from neffbench.jobs.summary import human_bytes
from neffbench.sweeps.accuracy import accuracy
from neffbench.views.job import JobView
from neffbench.views.run import RunView
from neffbench.views.sweep import PointView, SweepView, point_number


def workdir_of(sweep: SweepView | dict[str, Any]) -> Path:
    """The workdir holding the sweep's jobs: where its sweep.json lies (the workdir may have moved), else as recorded."""
    view = SweepView.of(sweep)
    if view.path:
        return Path(view.path).parent.parent.parent
    return Path(view.workdir or ".")


def _read(path: Path) -> JobView | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return JobView.of(data, str(path))
    except (OSError, ValueError):  # RecordError (a newer job.json, or no object) is a ValueError
        return None


def _latest_run(job_dir: Path) -> dict[str, Any] | None:
    """The latest succeeded run of the job's NEFF (or module) with timings, if it has been run."""
    runs_dir = job_dir / "runs"
    if not runs_dir.is_dir():
        return None
    from neffbench.runs.history import latest_timed, runs

    return latest_timed(runs(runs_dir))


def _latency(latest: dict[str, Any] | None) -> dict[str, Any] | None:
    """That run's latency figures."""
    if latest is None:
        return None
    run = RunView.of(latest)
    stats = run.stats or {}
    return {
        "p50_ms": stats.get("p50_ms"),
        "mean_ms": stats.get("mean_ms"),
        "items_per_s": stats.get("items_per_s"),
        "runtime": run.runtime,
        "mode": run.mode,
        "run": run.path,
    }


def _times(job: JobView) -> tuple[float | None, float | None]:
    """(compile_s, trace_s); a cache hit's are those of the compile it reuses."""
    metrics = job.metrics
    served_from = job.cache.get("served_from")
    if job.cache_hit and served_from:
        source = _read(Path(served_from) / "job.json")
        metrics = (source.metrics if source is not None else None) or metrics
    return metrics.get("compile_s"), metrics.get("trace_s")


def _row(workdir: Path, point: PointView) -> dict[str, Any]:
    job_dir = workdir / point.job_id if point.job_id else None
    job = _read(job_dir / "job.json") if job_dir is not None else None
    state = point.state
    if job is not None and job.outcome not in (None, "running"):
        state = job.outcome  # the job's record is the authority on the job
    row: dict[str, Any] = {
        "point": point.index,
        "label": point.label,
        "values": point.values,
        "bucket": point.bucket or (job.bucket if job is not None else {}),
        "outcome": state,
        "cached": point.cached or (job is not None and job.cache_hit),
        "reason": job.reason if job is not None and state != "succeeded" else point.reason,
        "problems": list(point.problems),
        "job_id": point.job_id,
        "job_dir": str(job_dir) if job_dir is not None and job_dir.is_dir() else None,
        "node": point.node,
        "attempts": point.attempts,
        "lost_attempts": list(point.lost_attempts),
        "memory_bytes": point.memory_bytes,
        "peak_rss_bytes": point.peak_rss_bytes,
        "duration_s": point.duration_s,
        "compile_s": None,
        "trace_s": None,
        "backend": None,
        "makes_neff": None,
        "neff_bytes": None,
        "numerics": None,
        "latency": None,
        "accuracy": None,
    }
    if job is not None and job_dir is not None:
        row["compile_s"], row["trace_s"] = _times(job)
        if "duration_s" in job.raw:  # a job that says nothing of its duration keeps the point's
            row["duration_s"] = job.duration_s
        row["backend"], row["makes_neff"] = job.backend, job.makes_neff
        row["neff_bytes"] = sum(int(n.get("size") or 0) for n in job.neffs) if job.neffs else None
        numerics = job.numerics or {}
        if numerics.get("checked"):
            row["numerics"] = {k: numerics.get(k) for k in ("match", "max_abs_error", "max_rel_error", "where")}
        latest = _latest_run(job_dir)  # read once: its latency and its error
        row["latency"] = _latency(latest)
        row["accuracy"] = accuracy(job_dir, latest)
    return row


def rows(sweep: SweepView | dict[str, Any]) -> list[dict[str, Any]]:
    """One dict per point: what the table shows, as numbers (None where unknown). Reads each point's job.json."""
    view = SweepView.of(sweep)
    workdir = workdir_of(view)
    return [_row(workdir, point) for point in view.points]


def as_json(sweep: SweepView | dict[str, Any]) -> dict[str, Any]:
    """What ``--json`` prints: the sweep's record without its points, and the rows."""
    keep = (
        "sweep_id",
        "path",
        "state",
        "reason",
        "created",
        "finished",
        "name",
        "kernel",
        "axes",
        "zip",
        "settings",
        "counts",
        "nodes",
        "versions",
        "workdir",
    )
    view = SweepView.of(sweep)
    # The record's own values, as written, so the JSON printed is what the file says.
    return {**{k: view.raw.get(k) for k in keep}, "rows": rows(view)}


def _seconds(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def _numerics(n: dict[str, Any] | None) -> str:
    if not n:
        return "-"
    err = n.get("max_abs_error")
    return (
        f"{'match' if n.get('match') else 'MISMATCH'} {err:.1e}"
        if isinstance(err, (int, float))
        else ("match" if n.get("match") else "MISMATCH")
    )


def _neff(row: dict[str, Any]) -> str:
    if backends.makes_no_neff(row["backend"]):
        return f"none ({row['backend']})"
    return human_bytes(row["neff_bytes"]) if row["neff_bytes"] else "-"


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(str, value)) + "]"
    return str(value)


def swept_value(row: dict[str, Any], field: str) -> Any:
    """The point's value of a swept field; a swept bucket axis reads as the point's own bucket."""
    tail = field.rsplit(".", 1)[-1]
    return row["bucket"][tail] if tail in row["bucket"] else row["values"].get(field)


def _sort_key(value: Any) -> Any:
    # Numbers sort as numbers; text after them; unknown ("-") last in either order of the table.
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return float("inf") if value in (None, "-") else str(value)


def table_cells(
    sweep: SweepView | dict[str, Any], table_rows: list[dict[str, Any]] | None = None
) -> tuple[list[str], list[list[str]], list[list[Any]]]:
    """The table: its head, each row's cells as text, and each cell's sort key (numbers where there are)."""
    table_rows = rows(sweep) if table_rows is None else table_rows
    view = SweepView.of(sweep)
    axes = view.fields
    short = view.short_names
    tails = {f.rsplit(".", 1)[-1] for f in axes}
    bucket_axes = [k for k in dict.fromkeys(k for r in table_rows for k in r["bucket"]) if k not in tails]
    show_bucket = bool(bucket_axes) and len({json.dumps(r["bucket"], sort_keys=True) for r in table_rows}) > 1
    show_node = any(r.get("node") for r in table_rows)
    head = [
        "#",
        *[short.get(f, f) for f in axes],
        *(["bucket"] if show_bucket else []),
        "outcome",
        "compile s",
        "job s",
        "peak",
        "NEFF",
        "numerics",
        "p50 ms",
        "run error",
        *(["node"] if show_node else []),
        "note",
    ]
    body, keys = [], []
    for r in table_rows:
        values = [swept_value(r, f) for f in axes]
        outcome = r["outcome"] + (" (cached)" if r["cached"] and r["outcome"] == "succeeded" else "")
        compile_s = r["compile_s"] if r["compile_s"] is not None else r["trace_s"]
        latency = r["latency"]
        p50_ms = latency.get("p50_ms") if latency and isinstance(latency.get("p50_ms"), (int, float)) else None
        p50 = f"{p50_ms:.3f} {latency.get('runtime') or ''}".rstrip() if p50_ms is not None else "-"
        note = ""
        if r["outcome"] != "succeeded":
            note = r["reason"] or "; ".join(p["message"] for p in r["problems"] if p["severity"] == "error")
        if r["lost_attempts"]:
            note = (note + "; " if note else "") + f"{len(r['lost_attempts'])} attempt(s) lost"
        bucket = " ".join(f"{k}={v}" for k, v in r["bucket"].items() if k in bucket_axes)
        body.append(
            [
                str(point_number(r["point"])),
                *[_value("-" if v is None else v) for v in values],
                *([bucket] if show_bucket else []),
                outcome,
                _seconds(compile_s),
                _seconds(r["duration_s"]),
                human_bytes(r["peak_rss_bytes"]) if r["peak_rss_bytes"] else "-",
                _neff(r),
                _numerics(r["numerics"]),
                p50,
                _error(r["accuracy"]),
                *([r.get("node") or "-"] if show_node else []),
                note[:100],
            ]
        )
        numerics = (r["numerics"] or {}).get("max_abs_error")
        keys.append(
            [
                _sort_key(r["point"]),
                *[_sort_key(v) if not isinstance(v, (list, tuple)) else str(v) for v in values],
                *([bucket] if show_bucket else []),
                outcome,
                _sort_key(compile_s),
                _sort_key(r["duration_s"]),
                _sort_key(r["peak_rss_bytes"]),
                _sort_key(r["neff_bytes"]),
                _sort_key(numerics),
                _sort_key(p50_ms),
                _sort_key((r["accuracy"] or {}).get("vs_eager")),
                *([r.get("node") or "-"] if show_node else []),
                note,
            ]
        )
    return head, body, keys


def _error(found: dict[str, Any] | None) -> str:
    """``2.1e-03`` (a run's error against the eager reference), ``2.1e-03, f64 4e-03`` once compared too."""
    if not found:
        return "-"
    parts = []
    if isinstance(found.get("vs_eager"), (int, float)):
        parts.append(f"{found['vs_eager']:.2g}")
    if isinstance(found.get("vs_float64"), (int, float)):
        parts.append(f"f64 {found['vs_float64']:.2g}")
    return ", ".join(parts) or "-"


def table_lines(sweep: dict[str, Any], table_rows: list[dict[str, Any]] | None = None) -> list[str]:
    """The table as text: a column per swept field, the bucket when it is not swept, then the results."""
    head, body, _ = table_cells(sweep, table_rows)
    grid = [head, *body]
    widths = [max(len(row[i]) for row in grid) for i in range(len(head) - 1)]
    return [("  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths)) + "  " + row[-1]).rstrip() for row in grid]


def point_differences(sweep: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What differs between two points: their table cells, then every spec field (from each job's spec.toml)."""
    head, (cells_a, cells_b), _ = table_cells(sweep, [a, b])
    out = [(h, x, y) for h, x, y in zip(head[1:], cells_a[1:], cells_b[1:]) if x != y]
    specs = []
    for row in (a, b):
        path = Path(row["job_dir"]) / "spec.toml" if row.get("job_dir") else None
        try:
            from neffbench.spec import load, to_dict

            specs.append(to_dict(load(path)) if path is not None and path.is_file() else {})
        except Exception:  # noqa: BLE001 - an unreadable spec shows as absent, the rest still compares
            specs.append({})
    from neffbench.neff.diff import spec_differences

    out += [
        (f"spec {d.key}", _value("-" if d.a is None else d.a), _value("-" if d.b is None else d.b))
        for d in spec_differences(*specs)
    ]
    return out
