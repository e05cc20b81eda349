"""Words for a run record, shared by the CLI and the window: what ran where, how it compared, how fast."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neffbench.views.run import RunView
from neffbench.words import plural


def latency_text(stats: dict[str, Any] | None) -> str:
    if not stats or not stats.get("iterations"):
        return "no timings"
    rate = stats.get("items_per_s")
    per = f", {rate:,.0f} items/s" if rate else ""
    return (
        f"p50 {stats['p50_ms']:.3f} ms, p90 {stats['p90_ms']:.3f}, p99 {stats['p99_ms']:.3f}, mean "
        f"{stats['mean_ms']:.3f} ± {stats['std_ms']:.3f} (min {stats['min_ms']:.3f}, max {stats['max_ms']:.3f}) "
        f"over {plural(stats['iterations'], 'iteration')}{per}"
    )


def numerics_text(numerics: dict[str, Any] | None) -> str:
    if not numerics:
        return "numerics: not compared (the run did not get that far)"
    if not numerics.get("checked"):
        return f"numerics: not compared ({numerics.get('reason')})"
    if numerics.get("problem"):
        return f"numerics: MISMATCH ({numerics['problem']})"
    verdict = "match" if numerics.get("match") else "MISMATCH"
    against = numerics.get("against") or "reference.npz"
    return (
        f"numerics against {against}: {verdict} (max abs error {numerics['max_abs_error']:.3g}, max rel "
        f"error {numerics['max_rel_error']:.3g}; atol {numerics['atol']:g}, rtol {numerics['rtol']:g})"
    )


def steps_lines(steps: dict[str, Any] | None) -> list[str]:
    """``--steps``: one line per call after the first, the state carried from each to the next."""
    if not steps:
        return []
    calls = steps.get("calls") or []
    head = f"  calls in a row, the state carried: {'match' if steps.get('match') else 'MISMATCH'} at " + (
        f"all {len(calls)}" if steps.get("match") else f"{sum(not c.get('match') for c in calls)} of {len(calls)}"
    )
    lines = [head + (f" (after a prefill by {steps['prefill']})" if steps.get("prefill") else "")]
    for call in calls:
        which = "call 1 (the prefill job)" if call.get("step") == "prefill" else f"call {int(call['step']) + 1}"
        error = call.get("max_abs_error")
        detail = f"max abs error {error:.3g}" if isinstance(error, (int, float)) else str(call.get("problem"))
        lines.append(f"    {which}: {'match' if call.get('match') else 'MISMATCH'} ({detail})")
    return lines


def summary_lines(record: RunView | Mapping[str, Any], path: str | None = None) -> list[str]:
    run = RunView.of(record)
    outcome = run.outcome or "?"
    head = f"{run.run_id}: {outcome if outcome == 'succeeded' else outcome.upper()}"
    if run.reason:
        head += f": {run.reason}"
    lines = [head]
    for warning in run.warnings:
        lines.append(f"  warning: {warning}")
    if run.runtime:
        lines.append(f"  runtime {run.runtime} ({run.label}, {run.mode} mode): {run.runtime_reason}")
        if not run.on_device:
            lines.append("  CPU figures: the NEFF did not run; these time the job's module on this host's CPU")
    for problem in run.checks:
        lines.append(f"  check: {problem}")
    lines.append(f"  {numerics_text(run.numerics)}")
    lines += steps_lines(run.steps)
    if run.cold_ms is not None:
        lines.append(f"  first (cold) call {run.cold_ms:.3f} ms")
    if run.stats:
        variant = f" [{run.variant}]" if run.variant else ""
        lines.append(f"  latency{variant}: {latency_text(run.stats)}")
    secondary = run.secondary
    if secondary:
        lines.append(f"  latency [{secondary['variant']}]: {latency_text(secondary.get('stats'))}")
    profile = run.profile
    if profile:
        if profile.get("captured"):
            summary = profile.get("summary") or {}
            lines.append(
                f"  profile {profile['ntff']}: total_time {summary.get('total_time')} s, "
                f"mfu_estimated_percent {summary.get('mfu_estimated_percent')}; open with: {profile['open']}"
            )
            for problem in (
                profile.get("problems") or []
            ):  # a profile that could not be read says why, in the tool's words
                lines.append(f"  profile: {problem}")
            if profile.get("layers"):
                lines.append(
                    f"  profile: {profile['layers']} framework operations timed, from {profile.get('source')}: "
                    "`neffbench structure JOB` lays them on the model's layers"
                )
        else:
            lines.append(f"  profile: not captured ({profile.get('reason')})")
    if path:
        lines.append(f"  record: {path}")
    return lines
