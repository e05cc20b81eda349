"""An explanation as text: what ``neffbench explain`` prints and the window's explanation pane shows."""

from __future__ import annotations

import shlex
import textwrap

from neffbench.compilerlog.commands import competing_options
from neffbench.compilerlog.exits import meaning
from neffbench.compilerlog.explain import Explanation
from neffbench.words import plural

TIMELINE_ROWS = 30
BAR = 28


def code_lines(code: str, indent: str = "  ") -> list[str]:
    from neffbench.compilerlog.codes import lookup

    found = lookup(code)
    out = [f"{indent}{code}: {found.title}"]
    out += textwrap.wrap(
        found.advice, 96, initial_indent=indent + "  ", subsequent_indent=indent + "  ", break_on_hyphens=False
    )
    out.append(f"{indent}  docs: {found.url}")
    return out


def timeline(exp: Explanation) -> list[str]:
    """The pass runs in order, each with a bar scaled to the longest."""
    runs = [(r.name, r.duration_s) for r in exp.log.passes if r.duration_s is not None]
    if not runs:
        return []
    shown = runs
    if len(runs) > TIMELINE_ROWS:
        keep = set(sorted(range(len(runs)), key=lambda i: -runs[i][1])[:TIMELINE_ROWS])
        shown = [r for i, r in enumerate(runs) if i in keep]
    longest = max(seconds for _, seconds in runs) or 1.0
    width = max(len(name) for name, _ in shown)
    total = sum(seconds for _, seconds in runs)
    out = [
        f"passes: {plural(len(runs), 'run')}, {total:.2f} s in all"
        + (f" (the {TIMELINE_ROWS} longest shown, in order)" if len(shown) < len(runs) else "")
    ]
    for name, seconds in shown:
        bar = "#" * max(1, round(BAR * seconds / longest))
        out.append(f"  {name.ljust(width)}  {seconds:9.3f} s  {bar}")
    for r in exp.log.pass_tracker.unfinished():
        out.append(f"  {r.name.ljust(width)}  {'running':>9}    (never finished: the compile stopped in it)")
    return out


def explanation_lines(
    exp: Explanation,
    *,
    recorded_version: str | None = None,
    recorded_command: list[str] | None = None,
    all_errors: bool = False,
) -> list[str]:
    """The explanation as text. ``recorded_*``: what a job's record says of the compiler, for an output that does
    not (a cached job's log, a log that never printed its version). ``all_errors``: every error after the first,
    each with its line and message, rather than their line numbers."""
    log = exp.log
    out = [
        f"{exp.source}: {plural(exp.line_count, 'line', grouped=True)}"
        + (f", {len(log.compiles)} compiles" if len(log.compiles) > 1 else ""),
        exp.headline,
    ]
    if log.exit_code not in (None, 0):
        out.append(f"exit status {log.exit_code}: {meaning(log.exit_code)}")
    first = log.first_error
    if first is not None:
        level = f", {first.level}" if first.level else ""
        out += ["", f"first error (line {first.line}{level}):"]
        out += [f"  {line}" for line in first.message.split("\n")]
        if first.code:
            out += code_lines(first.code)
        out.append("  context:")
        for number, text in exp.context(first.line):
            mark = ">" if number == first.line else " "
            out.append(f"  {mark}{number:>7} | {text[:200]}")
    cause = exp.cause_above_internal_error
    if cause is not None:
        out += ["", f"likely root cause (line {cause['line']}, just above the internal compiler error):"]
        out.append(f"  {cause['text']}")
    if first is not None:
        others = [e for e in log.errors if e is not first]
        if others and all_errors:
            out += ["", f"other errors ({len(others)}):"]
            for e in others:
                level = f", {e.level}" if e.level else ""
                lines = e.message.split("\n")
                out.append(f"  line {e.line}{level}: {lines[0]}")
                out += [f"    {line}" for line in lines[1:]]
        elif others:
            where = ", ".join(str(e.line) for e in others[:12]) + (" ..." if len(others) > 12 else "")
            out.append(f"other errors: {len(others)} (lines {where}); --all-errors shows each")
    other_codes = [c for c in log.codes if first is None or c != first.code]
    if other_codes:
        out += ["", "other codes:"]
        for code in other_codes:
            out += code_lines(code)
    steps = timeline(exp)
    if steps:
        out += ["", *steps]
    out.append("")
    out.append(f"compiler version: {log.compiler_version or _recorded(recorded_version)}")
    command = log.command or recorded_command
    out.append(f"command: {log.command_line or _recorded(shlex.join(recorded_command) if recorded_command else None)}")
    out += [f"  note: {note}" for note in competing_options(command)]
    if len(log.compiles) > 1:
        out.append("compiles:")
        for i, c in enumerate(log.compiles, 1):
            out.append(
                f"  {i}. from line {c.first_line}: status {c.status or '-'}, exit "
                f"{'-' if c.exit_code is None else c.exit_code}, {plural(c.errors, 'error')}"
            )
    return out


def _recorded(value: str | None) -> str:
    return f"{value} (from the job's record: this output does not say)" if value else "(not in this output)"
