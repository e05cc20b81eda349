"""The log reader on anything: random line soup never makes it raise, reading a big file through the
fast scan gives what reading every line gives, and the work (counted in calls) grows linearly with the input."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from neffbench.compilerlog import explain as explain_mod
from neffbench.compilerlog.explain import explain_bytes
from neffbench.compilerlog.lines import glued_record, parse_line
from neffbench.compilerlog.reader import CompilerLog
from tests.log_soup import PATHOLOGICAL_LINES, big_compile_log, junk, record, soup
from tests.work_count import calls_made

RECORDS = st.builds(lambda seed: record(random.Random(seed)), st.integers(0, 2**32))
JUNK = st.builds(lambda seed: junk(random.Random(seed)), st.integers(0, 2**32))
LINES = st.lists(st.one_of(RECORDS, JUNK, st.text(max_size=200)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(LINES)
def test_any_lines_are_read_without_raising(lines):
    log = CompilerLog()
    for line in lines:
        keep, events = log.feed(line)
        assert isinstance(keep, bool) and isinstance(events, list)
    summary = log.summary()
    assert summary["status"] in (None, "PASS", "FAIL", "ERROR")
    if log.first_error is not None:
        assert log.first_error in log.errors
        assert min(e.rank for e in log.errors) == log.first_error.rank


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 400))
def test_bytes_soup_with_bad_utf8_explains(seed, n):
    data = soup(random.Random(seed), n)
    got = explain_bytes(data, "soup").to_json()
    assert got["lines"] == data.count(b"\n")
    for err in got["errors"]:
        assert 1 <= err["line"] <= got["lines"]
        assert isinstance(err["message"], str)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(50, 600))
def test_the_fast_scan_reads_what_reading_every_line_reads(seed, n):
    rng = random.Random(seed)
    # Soup between the long runs of boring DEBUG records the scan exists to skip.
    data = b"".join(
        big_compile_log(rng.randint(20, 200), seed=seed) + soup(rng, rng.randint(0, n // 10)) for _ in range(3)
    )
    whole = _explain(data, limit=len(data) + 1)
    fast = _explain(data, limit=0)
    for key in (
        "status",
        "exit_code",
        "first_error",
        "errors",
        "codes",
        "passes",
        "compiler_version",
        "command",
        "compiles",
        "context",
        "lines",
    ):
        assert fast[key] == whole[key], key


def _explain(data: bytes, *, limit: int) -> dict:
    saved = explain_mod.UNWRAP_LIMIT
    explain_mod.UNWRAP_LIMIT = limit
    try:
        return explain_bytes(data, "x").to_json()
    finally:
        explain_mod.UNWRAP_LIMIT = saved


def test_work_grows_linearly_with_the_input():
    # Four times the lines: a reader that looks at each line a bounded number of times makes about as many calls
    # per line; a quadratic one (each line against the ones before) four times as many. make bench times it too.
    small = soup(random.Random(1), 1500)
    large = soup(random.Random(1), 6000)
    per_line = [calls_made(lambda data=data: explain_bytes(data)) / data.count(b"\n") for data in (small, large)]
    assert per_line[1] < 1.5 * per_line[0], per_line


def test_pathological_long_lines_stay_linear():
    # Shapes that make a careless reader loop over a line's parts: a line eight times longer costs no more calls
    # (a regular expression's backtracking happens inside one call: make bench times these lines).
    for line in PATHOLOGICAL_LINES:
        short = line[: len(line) // 8]
        costs = [calls_made(lambda s=s: (parse_line(s), glued_record(s), CompilerLog().feed(s))) for s in (short, line)]
        assert costs[1] < 2 * costs[0], (line[:40], costs)
