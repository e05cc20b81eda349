"""A job compared tap by tap as the Python API returns it: ``neffbench compare``'s document and report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.api import html
from neffbench.words import plural

REFERENCES = ("vs_eager", "vs_float64")


@dataclass(frozen=True)
class Compare:
    """``document`` is what ``neffbench compare --json`` prints and ``JOB/compares/`` keeps; ``lines`` its text."""

    document: dict[str, Any]
    lines: tuple[str, ...]
    path: Path

    @classmethod
    def of(cls, result: Any) -> Compare:
        """The compare of a finished ``neffbench.numerics.compare.CompareResult``."""
        return cls(result.document, tuple(result.lines), Path(result.path))

    @property
    def verdict(self) -> str | None:
        """``within tolerance``, ``divergent`` or ``could not compare``."""
        return self.document.get("verdict")

    @property
    def first_divergent(self) -> dict[str, str | None]:
        """The first tap over tolerance against each reference (None: none is)."""
        return dict(self.document.get("first_divergent") or {})

    @property
    def taps(self) -> list[dict[str, Any]]:
        return list(self.document.get("taps") or [])

    def to_json(self) -> dict[str, Any]:
        return self.document

    def rows(self) -> list[dict[str, Any]]:
        """One row per tap: its module, source, dtype, shape and each reference's figures."""
        out = []
        for tap in self.taps:
            row = {k: tap.get(k) for k in ("name", "module", "source", "dtype", "shape")}
            for reference in REFERENCES:
                figures = tap.get(reference) or {}
                for key in ("ok", "max_abs", "max_rel", "cosine", "times_tolerance"):
                    row[f"{reference}.{key}"] = figures.get(key)
            out.append(row)
        return out

    def to_pandas(self) -> Any:
        from neffbench.api.frames import frame

        return frame(self.rows())

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def __repr__(self) -> str:
        return f"<Compare of {self.document.get('job')}: {self.verdict}, {plural(len(self.taps), 'tap')}>"

    def _repr_html_(self) -> str:
        ok = {"within tolerance": True, "divergent": False}.get(str(self.verdict))
        charts = []
        for reference in REFERENCES:
            labels = [str(t.get("module") or t.get("name")) for t in self.taps]
            figures = [t.get(reference) or {} for t in self.taps]
            values = [
                f.get("times_tolerance") if isinstance(f.get("times_tolerance"), (int, float)) else None
                for f in figures
            ]
            if any(v is not None for v in values):
                title = f"<div>{html.escape(reference.replace('_', ' '))}: error in multiples of the tolerance</div>"
                charts.append(title + html.bars(labels, values, [f.get("ok") for f in figures], limit=1.0))
        summary = "".join(f"<div>{html.escape(s)}</div>" for s in self.document.get("summary") or [])
        return html.block(
            html.heading(f"compare of {self.document.get('job')}", str(self.verdict), ok), summary, *charts
        )


def compare_job(
    job_dir: str | Path,
    taps: Sequence[str] = (),
    *,
    depth: int | None = None,
    runtime: str = "auto",
    cache: bool = True,
    on_line: Callable[[str], None] | None = None,
) -> Compare:
    """``neffbench compare JOB``: raises ``neffbench.numerics.compare.CompareError`` when it cannot compare, ValueError
    for a bad depth or a folder that is no job. Ctrl-C cancels it, then raises KeyboardInterrupt."""
    from neffbench.api.waiting import waited
    from neffbench.numerics.compare import Compare as Comparing

    if depth is not None and depth < 1:
        raise ValueError(f"depth must be 1 or more, got {depth}")
    folder = Path(job_dir).expanduser().resolve()
    if not (folder / "job.json").is_file():
        raise ValueError(f"{job_dir} is not a job directory (it has no job.json)")
    say = on_line or (lambda line: None)
    comparing = Comparing(
        folder, patterns=tuple(taps), depth=depth, runtime=runtime, use_cache=cache, on_line=on_line, on_step=say
    )
    return Compare.of(waited(comparing.run, comparing.cancel, name="neffbench-compare", say=say))
