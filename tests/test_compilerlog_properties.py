"""The log reader on anything: random line soup never makes it raise, reading a big file through the
fast scan gives what reading every line gives, and the work grows linearly with the input."""

from __future__ import annotations

import random
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from neffbench.compilerlog import explain as explain_mod
from neffbench.compilerlog.explain import explain_bytes
from neffbench.compilerlog.lines import glued_record, parse_line
from neffbench.compilerlog.reader import CompilerLog
from tests.log_soup import big_compile_log, junk, record, soup

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


def _best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def test_work_grows_linearly_with_the_input():
    # Four times the lines must cost well under the 16 times a quadratic reader would take.
    small = soup(random.Random(1), 1500)
    large = soup(random.Random(1), 6000)
    ratio = _best_of(lambda: explain_bytes(large)) / _best_of(lambda: explain_bytes(small))
    assert ratio < 9, ratio


def test_pathological_long_lines_stay_linear():
    # Shapes that make a careless regular expression backtrack: long runs of what a record's parts look like.
    for line in (
        "2024-01-01T00:00:00Z " + "1 " * 40_000,
        "2024-01-01T00:00:00Z ERROR 1 [" + "a" * 80_000,
        "[" * 80_000,
        "." * 50_000 + "2024-01-01T00:00:00Z ERROR 1 [x]: y",
        "NCC_" * 30_000,
        "03/04/2021 05:06:07 AM " + "[1] " * 20_000,
        "Running " + "x" * 80_000,
        "03/04/2021 05:06:07 AM ERROR 1 " + "2 " * 40_000,
        "F0000 00:00:1.5 " + "1 " * 40_000,
        "thread 'main' panicked at " + "x" * 80_000,
        "neuronx-cc " * 8_000 + "exited with status 1",
        "`neuronx-cc " * 8_000,
        "Finished pass " + "x" * 80_000,
    ):
        short, long_ = line[: len(line) // 8], line
        t_short = _best_of(lambda short=short: (parse_line(short), glued_record(short), CompilerLog().feed(short)))
        t_long = _best_of(lambda long_=long_: (parse_line(long_), glued_record(long_), CompilerLog().feed(long_)))
        assert t_long < max(0.05, 40 * t_short), (line[:40], t_short, t_long)
