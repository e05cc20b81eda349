"""An explanation of compiler output: what happened, the cause, what the codes and exit status mean.

The same explanation serves ``neffbench explain``, the window's Compile tab and a job's detail.
Input is whatever a user has: a ``log-neuron-cc.txt``, a pasted stdout, a job's ``job.log`` (or the
job directory), a file holding several compiles, standard input.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.compilerlog import exits, scan
from neffbench.compilerlog.commands import competing_options
from neffbench.compilerlog.errors import CONTEXT_LINES, PANIC_HEAD_RE
from neffbench.compilerlog.lines import codes_in, parse_line
from neffbench.compilerlog.reader import CompilerLog
from neffbench.compilerlog.wrapping import logical_lines

JOB_LOG, COMPILER_LOG = "job.log", "log-neuron-cc.txt"


class ExplainError(Exception):
    """The input cannot be read; the message says which and why."""


def log_file_for(path: Path) -> Path:
    """The log a path stands for: a file itself, a job directory's job.log, a compiler workdir's log."""
    if path.is_dir():
        for candidate in (path / JOB_LOG, path / COMPILER_LOG, path / "compiler" / COMPILER_LOG):
            if candidate.is_file():
                return candidate
        raise ExplainError(f"{path} is a directory without a {JOB_LOG} or {COMPILER_LOG} to explain")
    if not path.exists():
        raise ExplainError(f"{path}: no such file")
    return path


def read_source(source: str | Path) -> tuple[bytes, str]:
    """(bytes, name) of a path, a job directory or ``-`` (standard input)."""
    if str(source) == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    path = log_file_for(Path(source))
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise ExplainError(f"cannot read {path}: {exc.strerror or exc}") from exc


class Text:
    """The input's lines, for their count and the lines around one of them."""

    def __init__(self, data: bytes, offsets: dict[int, int] | None = None, lines: list[str] | None = None):
        self._data, self._offsets, self._lines = data, offsets or {}, lines
        self.count = (
            len(lines) if lines is not None else data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        )

    def around(self, number: int, n: int = CONTEXT_LINES) -> list[tuple[int, str]]:
        if self._lines is not None:
            lo, hi = max(1, number - n), min(self.count, number + n)
            return [(k, self._lines[k - 1]) for k in range(lo, hi + 1)]
        data, at = self._data, self._offsets.get(number)
        if at is None:
            return []
        start, first = at, number
        while first > max(1, number - n):
            start = data.rfind(b"\n", 0, start - 1) + 1
            first -= 1
        out, pos = [], start
        for k in range(first, min(self.count, number + n) + 1):
            end = data.find(b"\n", pos)
            end = len(data) if end == -1 else end
            out.append((k, data[pos:end].decode("utf-8", errors="replace").rstrip("\r")))
            pos = end + 1
        return out


@dataclass
class Explanation:
    source: str
    log: CompilerLog
    text: Text
    # For a job directory, what its record says of the job: a job can fail after its compiler passed.
    job: dict[str, Any] | None = None

    @property
    def line_count(self) -> int:
        return self.text.count

    @property
    def outcome(self) -> str:
        """``failed``, ``passed`` or ``unknown`` (the output says neither)."""
        log = self.log
        if log.status in ("FAIL", "ERROR") or (log.exit_code not in (None, 0)):
            return "failed"
        if log.status == "PASS" or log.exit_code == 0:
            return "failed" if log.errors and log.status is None else "passed"
        return "failed" if log.errors else "unknown"

    @property
    def cause_above_internal_error(self) -> dict[str, Any] | None:
        """``{"line", "text"}`` of the line just above an internal compiler error's banner that states a failure
        (``HLO import failed ...`` above ``[NLA001]``), when it is not the first error itself: the likely root cause
        of what the compiler then reports only as an internal error."""
        found = self.log.cause_above_internal_error
        first = self.log.first_error
        if found is None or (first is not None and first.line == found[0]):
            return None
        return {"line": found[0], "text": found[1]}

    def context(self, number: int, around: int = CONTEXT_LINES) -> list[tuple[int, str]]:
        return self.text.around(number, around)

    @property
    def headline(self) -> str:
        """One sentence: the outcome, what the output said about it, and the cause."""
        log = self.log
        said = [f"Compiler status {log.status}"] if log.status else []
        if log.exit_code is not None:
            said.append(f"exit {log.exit_code} ({exits.meaning(log.exit_code)})")
        head = {"failed": "Failed", "passed": "Passed", "unknown": "No outcome in this output"}[self.outcome]
        first = log.first_error
        cause = f": {_first_line(first.message)}" if first is not None and self.outcome == "failed" else ""
        job = self.job or {}
        if job.get("outcome") not in (None, "running", "succeeded") and self.outcome != "failed":
            # The compiler's output alone would read as a success: the job's own end says otherwise.
            compiler = {"passed": "after the compiler passed", "unknown": "with no compiler outcome in its log"}
            return (
                f"Job {job['outcome']} {compiler[self.outcome]}"
                + (f" ({'; '.join(said)})" if said else "")
                + f": {job.get('reason') or 'no reason recorded'}"
            )
        return head + (f" ({'; '.join(said)})" if said else "") + cause

    def to_json(self) -> dict[str, Any]:
        from neffbench.compilerlog.codes import lookup

        log = self.log
        first = log.first_error
        return {
            "status": log.status,
            "exit_code": log.exit_code,
            "first_error": first.to_json() if first else None,
            "errors": [e.to_json() for e in log.errors],
            "codes": list(log.codes),
            "passes": [p.to_json() for p in log.passes],
            "compiler_version": log.compiler_version,
            "command": log.command_line,
            # Beyond the promised keys:
            "command_notes": competing_options(log.command),
            "cause_above_internal_error": self.cause_above_internal_error,
            "source": self.source,
            "outcome": self.outcome,
            "headline": self.headline,
            "job": self.job,
            "exit_meaning": exits.meaning(log.exit_code),
            "code_help": {code: lookup(code).to_dict() for code in log.codes},
            "unfinished_passes": [p.name for p in log.pass_tracker.unfinished()],
            "context": [{"line": n, "text": t} for n, t in self.context(first.line)] if first else [],
            "compiles": [
                {
                    "first_line": c.first_line,
                    "status": c.status,
                    "exit_code": c.exit_code,
                    "version": c.version,
                    "command": c.command,
                    "errors": c.errors,
                }
                for c in log.compiles
            ],
            "lines": self.line_count,
        }


def _first_line(message: str) -> str:
    """The line of a message that says what went wrong: its first, past a Rust panic's header (``thread 'main'
    panicked at src/x.rs:1:2:``, a place in the harness), to the panic's payload."""
    lines = message.split("\n")
    return next((line for line in lines if not PANIC_HEAD_RE.match(line)), lines[0])


# Pasted logs (the only hard-wrapped ones) are small; only those are read line by line to unwrap them.
UNWRAP_LIMIT = 4 << 20


def explain_bytes(data: bytes, source: str = "<text>") -> Explanation:
    log = CompilerLog(dedup=False)
    if len(data) <= UNWRAP_LIMIT:
        # Only "\n" ends a line (as for grep and the scan below); str.splitlines would also split at \f, \x1c...
        lines = [line.rstrip("\r") for line in data.decode("utf-8", errors="replace").split("\n")]
        if lines and not lines[-1]:
            lines.pop()
        for number, line in logical_lines(lines):
            log.feed(line, line_no=number)
        return Explanation(source, log, Text(data, lines=lines))
    offsets: dict[int, int] = {}
    last = 0
    for number, offset, line in scan.interesting(data):
        if number != last + 1:
            log.gap()
        log.feed(line, line_no=number)
        offsets[number], last = offset, number
    return Explanation(source, log, Text(data, offsets))


def explain_text(text: str, source: str = "<text>") -> Explanation:
    return explain_bytes(text.encode("utf-8", errors="replace"), source)


def explain(source: str | Path) -> Explanation:
    data, name = read_source(source)
    out = explain_bytes(data, name)
    record = Path(source) / "job.json" if str(source) != "-" and Path(source).is_dir() else None
    if record is not None and record.is_file():
        try:
            job = json.loads(record.read_text(encoding="utf-8"))
            out.job = {"outcome": job.get("outcome"), "reason": job.get("reason")} if isinstance(job, dict) else None
        except (OSError, ValueError):
            pass
    return out


# What a drop reads to tell a compiler log from any other file; explain() itself reads the whole file.
SNIFF_BYTES = 64 << 10
_OUTPUT_MARKERS = re.compile(r"^Compiler status \w+|^Traceback \(most recent call last\)|exitcode=-?\d", re.M)


def not_a_log(path: str | Path) -> str | None:
    """Why ``path`` is not compiler output to explain, as a clause naming it (``photo.png is not text``); None when
    it is: a job or compiler directory with its log, or a text file whose start reads as compiler output (a log
    record, an error code, a status line, a traceback)."""
    path = Path(path)
    try:
        log = log_file_for(path)
        with log.open("rb") as f:
            head = f.read(SNIFF_BYTES)
    except ExplainError as exc:
        return str(exc)
    except OSError as exc:
        return f"{path.name} cannot be read ({exc.strerror or exc})"
    if not head.strip():
        return f"{log.name} is empty"
    text = head.decode("utf-8", errors="replace")
    if b"\0" in head or text.count("\ufffd") > len(text) // 100:
        return f"{log.name} is not text (an image or other binary file)"
    if _OUTPUT_MARKERS.search(text):
        return None
    if any(parse_line(line).is_record or codes_in(line) for line in text.splitlines()[:5000]):
        return None
    return f"{log.name} does not read as compiler output (no log records, error codes, status or traceback in it)"
