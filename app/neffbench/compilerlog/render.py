"""An explanation as text: what ``neffbench explain`` prints and the window's explanation pane shows."""

from __future__ import annotations

import textwrap

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


def explanation_lines(exp: Explanation) -> list[str]:
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
        others = [e for e in log.errors if e is not first]
        if others:
            where = ", ".join(str(e.line) for e in others[:12]) + (" ..." if len(others) > 12 else "")
            out.append(f"other errors: {len(others)} (lines {where})")
    other_codes = [c for c in log.codes if first is None or c != first.code]
    if other_codes:
        out += ["", "other codes:"]
        for code in other_codes:
            out += code_lines(code)
    steps = timeline(exp)
    if steps:
        out += ["", *steps]
    out.append("")
    out.append(f"compiler version: {log.compiler_version or '(not in this output)'}")
    out.append(f"command: {log.command_line or '(not in this output)'}")
    if len(log.compiles) > 1:
        out.append("compiles:")
        for i, c in enumerate(log.compiles, 1):
            out.append(
                f"  {i}. from line {c.first_line}: status {c.status or '-'}, exit "
                f"{'-' if c.exit_code is None else c.exit_code}, {plural(c.errors, 'error')}"
            )
    return out
