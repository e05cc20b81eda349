"""How the log reader's time grows: four times the lines, and lines eight times longer in the shapes that make a
careless regular expression backtrack. The suite counts calls for the same inputs (tests/test_compilerlog_properties.py);
backtracking happens inside one call, so only a clock sees it."""

from __future__ import annotations

import random
import time

from tests.log_soup import PATHOLOGICAL_LINES, soup

REPEAT = 5
LINES_TARGET = 9.0  # four times the lines: linear reading costs about 4x, a quadratic reader 16x
LONG_LINE_TARGET = 40.0  # eight times the line: linear about 8x, backtracking 64x and more


def _best_of(fn) -> float:
    """The least CPU time of REPEAT calls: other processes' load does not count in it."""
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def run() -> list[str]:
    from neffbench.compilerlog.explain import explain_bytes
    from neffbench.compilerlog.lines import glued_record, parse_line
    from neffbench.compilerlog.reader import CompilerLog

    small, large = soup(random.Random(1), 1500), soup(random.Random(1), 6000)
    t_small, t_large = _best_of(lambda: explain_bytes(small)), _best_of(lambda: explain_bytes(large))
    lines = [
        f"| the log reader's growth (least CPU time of {REPEAT}) | short, ms | long, ms | ratio | target |",
        "|---|---|---|---|---|",
        f"| explain: 1,500 lines of soup, then 6,000 | {t_small * 1e3:.1f} | {t_large * 1e3:.1f} | "
        f"{t_large / t_small:.1f} | under {LINES_TARGET:g} |",
    ]
    worst = 0.0
    for line in PATHOLOGICAL_LINES:

        def read(text: str = line) -> None:
            parse_line(text), glued_record(text), CompilerLog().feed(text)

        short = line[: len(line) // 8]
        t_short = _best_of(lambda short=short: read(short))
        t_long = _best_of(read)
        worst = max(worst, t_long / t_short)
        lines.append(
            f"| one line, 1/8 then all of `{line[:24].replace('|', '/')}…` ({len(line):,} chars) | "
            f"{t_short * 1e3:.2f} | {t_long * 1e3:.2f} | {t_long / t_short:.1f} | under {LONG_LINE_TARGET:g} |"
        )
    lines += ["", f"Worst long-line ratio: {worst:.1f} (target under {LONG_LINE_TARGET:g})."]
    return lines
