"""Every format in tests/data/compiler_logs/ (synthetic logs shaped like real public ones; see its README)
is explained with exactly the fields its ``.expected.json`` states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neffbench.compilerlog.explain import explain

CORPUS = Path(__file__).parent / "data" / "compiler_logs"
LOGS = sorted(p for p in CORPUS.glob("*.log") if p.with_suffix(".expected.json").is_file())
KEYS = ("status", "exit_code", "first_error", "errors", "codes", "passes", "compiler_version", "command")
OPTIONAL = ("outcome", "cause_above_internal_error")  # checked where an expectation states it


def test_the_corpus_is_there():
    assert len(LOGS) >= 20


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_explained_exactly(log: Path):
    expected = json.loads(log.with_suffix(".expected.json").read_text(encoding="utf-8"))
    got = explain(log).to_json()
    assert set(KEYS) <= set(expected), f"{log.name}.expected.json lacks {set(KEYS) - set(expected)}"
    for key in KEYS + tuple(k for k in OPTIONAL if k in expected):
        assert got[key] == expected[key], f"{log.name}: {key}"
