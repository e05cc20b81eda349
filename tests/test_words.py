"""Counts in messages agree with their nouns ("1 line", "2 lines"), and sentences are joined as sentences."""

from __future__ import annotations

import re
from pathlib import Path

from neffbench.kernels.bucket_words import bucket_phrase, buckets_text
from neffbench.words import number, plural, sentences

APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"


def test_plural_agrees_with_the_count():
    assert plural(1, "line") == "1 line"
    assert plural(0, "line") == "0 lines"
    assert plural(12000, "line", grouped=True) == "12,000 lines"
    assert plural(2, "pass") == "2 passes"
    assert plural(3, "more error", "more errors") == "3 more errors"


def test_numbers_are_written_as_typed_whole_numbers_whole():
    from neffbench.schema.fields import range_problems

    assert [number(v) for v in (999999999, 99999999999, 64.0, 1.234567, 1e-06, 0.1, 2**31 - 1)] == [
        "999999999", "99999999999", "64", "1.234567", "1e-06", "0.1", "2147483647",
    ]  # fmt: skip
    meta = {"label": "Max positions", "min": 1, "max": 2**31 - 1}
    (problem,) = range_problems("rope.max_pos", meta, 99999999999)
    assert problem.message == "Max positions must be between 1 and 2147483647; got 99999999999."


def test_sentences_begin_with_a_capital_and_end_with_a_stop():
    assert sentences("Succeeded: 1 of 1 bucket checked on CPU", "no NEFF (cpu-check): nothing was compiled") == (
        "Succeeded: 1 of 1 bucket checked on CPU. No NEFF (cpu-check): nothing was compiled."
    )
    assert sentences("done.", "", "  ") == "Done."


def test_a_bucket_of_one_token_is_one_token():
    assert bucket_phrase({"num_tokens": 1}) == "1 token"
    assert bucket_phrase({"num_tokens": 8}) == "8 tokens"
    assert buckets_text([{"num_tokens": 1}]) == "1 token"
    assert buckets_text([{"num_tokens": 1}, {"num_tokens": 8}]) == "1, 8 tokens"


def test_a_cpu_check_compile_headline_joins_its_sentences():
    from types import SimpleNamespace

    from neffbench.gui.compile.panel import finished_text

    run = SimpleNamespace(outcome="succeeded", cpu_check_only=True, results=[object()], served_from_cache=0)
    text = finished_text(run, 1)
    assert text == "Succeeded: 1 of 1 bucket checked on CPU. No NEFF (cpu-check): nothing was compiled for Neuron."


def test_a_compile_served_from_the_cache_never_reads_as_compiled():
    from types import SimpleNamespace

    from neffbench.gui.compile.controller import CompileRun
    from neffbench.gui.compile.panel import finished_text

    def job(hit: bool):
        return SimpleNamespace(outcome="succeeded", view=SimpleNamespace(cache_hit=hit, makes_neff=True))

    served = CompileRun(spec=None, results=[job(True)])
    assert finished_text(served, 1) == "Succeeded: 1 of 1 bucket served from the cache (nothing was compiled here)."
    assert served.headline == "Compile served from the cache"
    mixed = CompileRun(spec=None, results=[job(False), job(True), job(True)])
    assert finished_text(mixed, 3) == "Succeeded: 3 of 3 buckets compiled (1) or served from the cache (2)."
    assert mixed.headline == "Compile succeeded"
    compiled = CompileRun(spec=None, results=[job(False)])
    assert finished_text(compiled, 1) == "Succeeded: 1 of 1 bucket compiled."


def test_no_message_counts_with_a_bare_plural():
    """A count put before a fixed plural noun ("{n} lines") says "1 lines" one day: it goes through plural()."""
    pattern = re.compile(r"\{[^{}]*(len\(|count|lines|received|folded)[^{}]*\}\s+(lines|tokens|taps|files)\b")
    offenders = [
        f"{p.relative_to(APP)}:{i}"
        for p in APP.rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
