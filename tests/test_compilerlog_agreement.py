"""Every log of the corpus gets one answer, however it is read: ``neffbench explain`` of the whole file,
the live reader a running job's output goes through line by line (compared by the job-record harness
in tests/explain_agreement.py, as for real jobs), and the fast scan a big file is read with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neffbench.compilerlog import explain as explain_mod
from neffbench.compilerlog.explain import explain_bytes
from neffbench.compilerlog.reader import CompilerLog
from neffbench.compilerlog.wrapping import logical_lines, wrap_width
from tests.explain_agreement import check_job

CORPUS = Path(__file__).parent / "data" / "compiler_logs"
LOGS = sorted(CORPUS.glob("*.log"))
KEYS = (
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
    "outcome",
)


def _lines(data: bytes) -> list[str]:
    lines = [line.rstrip("\r") for line in data.decode("utf-8", errors="replace").split("\n")]
    return lines[:-1] if lines and not lines[-1] else lines


def _job_read_live(job_dir: Path, data: bytes) -> None:
    """A job directory whose job.json holds what the live reader made of ``data`` fed line by line."""
    lines = _lines(data)
    reader = CompilerLog()
    if wrap_width(lines) is None:
        for line in lines:
            reader.feed(line)
    else:
        # A running job's output comes from the compiler's pipes and is never hard-wrapped: a wrapped
        # paste stands for the output it was made from, which is what the live reader would be given.
        for number, line in logical_lines(lines):
            reader.feed(line, line_no=number)
    job_dir.mkdir()
    (job_dir / "job.log").write_bytes(data)
    first = reader.first_error
    record = {
        "schema_version": 1,
        "stages": [],
        "worker_pid": 1,
        "outcome": "failed",
        "compiler": reader.summary(),
        "error": first.to_record() if first else None,
    }
    (job_dir / "job.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_the_live_reader_says_what_explain_says(log: Path, tmp_path):
    job = tmp_path / log.stem
    _job_read_live(job, log.read_bytes())
    check_job(job)


UNWRAPPED = [p for p in LOGS if wrap_width(_lines(p.read_bytes())) is None]


@pytest.mark.parametrize("log", UNWRAPPED, ids=[p.stem for p in UNWRAPPED])
def test_the_fast_scan_reads_each_log_as_the_whole_read_does(log: Path, monkeypatch):
    # Pastes (the only wrapped files) are never big enough for the scan; every other log must not care.
    data = log.read_bytes()
    whole = explain_bytes(data, log.name).to_json()
    monkeypatch.setattr(explain_mod, "UNWRAP_LIMIT", 0)
    fast = explain_bytes(data, log.name).to_json()
    for key in KEYS:
        assert fast[key] == whole[key], f"{log.name}: {key}"
