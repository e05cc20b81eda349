"""A run of a job's NEFF (or its module on the CPU) as the Python API returns it: the run record, ``neffbench run``'s."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.api import html
from neffbench.views.run import RunView

PERCENTILES = ("p50_ms", "p90_ms", "p99_ms", "mean_ms", "min_ms", "max_ms")


@dataclass(frozen=True)
class Run:
    """One run record (``<job>/runs/<time>-<runtime>.json``), read through :class:`neffbench.views.run.RunView`.

    ``to_json()`` is the record ``neffbench run --json`` prints."""

    path: Path
    view: RunView

    @classmethod
    def of(cls, result: Any) -> Run:
        """The run of a finished ``neffbench.runs.neff_run.RunResult``."""
        return cls(Path(result.path), RunView.of(result.record))

    @property
    def outcome(self) -> str | None:
        return self.view.outcome

    @property
    def succeeded(self) -> bool:
        return self.view.outcome == "succeeded"

    @property
    def runtime(self) -> str | None:
        return self.view.runtime

    @property
    def on_device(self) -> bool:
        """False for the CPU runtime: its figures are the CPU's, never a NeuronCore's."""
        return self.view.on_device

    @property
    def stats(self) -> dict[str, Any]:
        """mean, min, max, std, p50, p90, p99 in ms, and items per second."""
        return dict(self.view.stats or {})

    @property
    def durations_ms(self) -> tuple[float, ...]:
        return self.view.durations_ms

    @property
    def numerics(self) -> dict[str, Any] | None:
        return self.view.numerics

    def to_json(self) -> dict[str, Any]:
        """The run record as written (what ``neffbench run --json`` prints)."""
        return dict(self.view.raw)

    def to_pandas(self) -> Any:
        """One row per timed call: ``iteration`` and ``ms``."""
        from neffbench.api.frames import frame

        return frame([{"iteration": i, "ms": d} for i, d in enumerate(self.durations_ms)])

    def __repr__(self) -> str:
        p50 = self.stats.get("p50_ms")
        figure = f", p50 {p50 * 1000:.1f} µs" if isinstance(p50, (int, float)) else ""
        return f"<Run {self.path.name}: {self.outcome} on {self.view.where}{figure}>"

    def _repr_html_(self) -> str:
        view = self.view
        ok = None if view.outcome in (None, "running") else view.outcome == "succeeded"
        where = view.where + ("" if view.on_device else " (CPU: not a device figure)")
        facts = [("runtime", where), ("record", self.path)]
        if view.reason:
            facts.append(("reason", view.reason))
        numerics = view.numerics or {}
        if numerics:
            facts.append(("numerics", f"match: {numerics.get('match')}, max abs error {numerics.get('max_abs_error')}"))
        stats = self.stats
        table = html.table(
            [p.removesuffix("_ms") for p in PERCENTILES],
            [[f"{stats[p] * 1000:.1f} µs" if isinstance(stats.get(p), (int, float)) else "-" for p in PERCENTILES]],
        )
        chart = html.histogram([d * 1000 for d in self.durations_ms], unit="µs")
        return html.block(
            html.heading(f"run {self.path.stem}", view.outcome or "?", ok), html.pairs(facts), table, chart
        )


def run_job(
    target: str | Path,
    runtime: str = "auto",
    iterations: int = 50,
    *,
    warmup: int = 5,
    neff: str | None = None,
    on_line: Callable[[str], None] | None = None,
    **options: Any,
) -> Run:
    """Run a job directory (or a NEFF file) as ``neffbench run`` does; ValueError for a target or options that
    cannot be run (nothing started). Ctrl-C cancels the run (recorded), then raises KeyboardInterrupt."""
    from neffbench.api.waiting import waited
    from neffbench.runs.neff_run import NeffRun
    from neffbench.runs.subject import SubjectError, resolve

    say = on_line or (lambda line: None)
    try:
        runner = NeffRun(
            resolve(target, neff=neff), runtime=runtime, iterations=iterations, warmup=warmup, on_line=say, **options
        )
    except SubjectError as exc:
        raise ValueError(f"{target}: {exc}") from None

    def work() -> Any:
        runner.start()
        return runner.wait()

    return Run.of(waited(work, runner.cancel, name="neffbench-run", say=say))
