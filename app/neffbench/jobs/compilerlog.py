"""Understanding neuronx-cc output: log records, passes, error codes, status, exit codes and the command run.

Records look like ``2024-12-04T01:01:23Z INFO 10200 [root]: Pipeline: Frontend WalrusDriver ...``
(``<ISO8601>Z <LEVEL> <pid> [<logger>]: <message>``); older releases wrote
``06/16/2021 04:16:55 PM INFO [WalrusDriver]: ...``. Anything else (progress dots, ``Compiler status
PASS``, Python tracebacks, the worker's own lines) is kept as a plain line and still searched for
error codes.
"""

from __future__ import annotations

import re
import shlex
from collections import OrderedDict, deque
from dataclasses import asdict, dataclass, field
from typing import Any

LEVELS = ("DEBUG", "INFO", "USER", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL")
_ERROR_LEVELS = ("ERROR", "CRITICAL", "FATAL")

_RECORD_RE = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z|\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2} [AP]M)\s+"
    rf"(?:(?P<level>{'|'.join(LEVELS)})\s+)?"
    r"(?:(?P<pid>\d+)\s+)?"
    r"(?:\[(?P<logger>[^\]]*)\]:\s?)?"
    r"(?P<message>.*)$"
)
# [NLA001], [XTP002], [TEN404], [F134]. Logger names ([root], [job.Frontend.0], [sg0000/Tensorizer])
# never have this letters-then-digits shape.
_BRACKET_CODE_RE = re.compile(r"\[(?P<code>[A-Z]{1,5}\d{3,4})\]")
_NCC_CODE_RE = re.compile(r"\b(?P<code>NCC_[A-Z]{2,10}\d{3,4})\b")
_PASS_START_RE = re.compile(r"^Running (?:walrus pass: )?(?P<name>[A-Za-z_][\w.]*)\s*$")
_PASS_END_RE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*) finished after (?P<seconds>\d+(?:\.\d+)?) seconds")
_PIPELINE_RE = re.compile(r"^Pipeline:\s*(?P<passes>.+)$")
_STATUS_RE = re.compile(r"Compiler status (?P<status>PASS|FAIL)\b")
_EXIT_RE = re.compile(r"neuronx-cc failed with (?P<code>-?\d+)")
_COMMAND_RE = re.compile(
    r"(?:command line|compiler command|call compiler with cmd|running command)\s*:?\s*['\"]?(?P<cmd>\S*neuronx-cc\s+compile\b[^'\"]*)",
    re.IGNORECASE,
)
_VERSION_RE = re.compile(r"NeuronX Compiler version (?P<version>\S+)")
_PY_EXCEPTION_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): (?P<message>.*)$")

EXIT_CODES = {
    -9: "killed by SIGKILL, most often by the out-of-memory killer (the host ran out of memory)",
    -6: "aborted (SIGABRT), usually a failed internal assertion",
    -11: "segmentation fault (SIGSEGV): a crash",
    -15: "terminated (SIGTERM)",
    1: "the compiler reported an error",
}
CONTEXT_LINES = 4
_DEDUP_MEMORY = 20_000


def explain_exit_code(code: int | None) -> str | None:
    """What a compiler or worker exit code means, in words."""
    if code is None:
        return None
    return EXIT_CODES.get(code, f"exited with {code}")


def error_code_help(code: str) -> str | None:
    if code.startswith("NCC_"):
        return f"see the Neuron SDK's compiler/error-codes/{code} page"
    return None


@dataclass(frozen=True)
class LogRecord:
    """One line of output; fields other than ``line`` and ``message`` are None for plain lines."""

    line: str
    message: str
    timestamp: str | None = None
    level: str | None = None
    pid: int | None = None
    logger: str | None = None
    codes: tuple[str, ...] = ()

    @property
    def is_record(self) -> bool:
        return self.timestamp is not None


def parse_line(line: str) -> LogRecord:
    """Split a compiler log line into its fields (any line is accepted)."""
    codes = tuple(dict.fromkeys(
        [m.group("code") for m in _BRACKET_CODE_RE.finditer(line)] + [m.group("code") for m in _NCC_CODE_RE.finditer(line)]
    ))
    m = _RECORD_RE.match(line)
    if not m:
        return LogRecord(line, line.strip(), codes=codes)
    level = m.group("level")
    return LogRecord(
        line=line,
        message=m.group("message"),
        timestamp=m.group("ts"),
        level="WARNING" if level == "WARN" else level,
        pid=int(m.group("pid")) if m.group("pid") else None,
        logger=m.group("logger"),
        codes=codes,
    )


def command_from_text(text: str) -> list[str] | None:
    """The neuronx-cc argv in ``command.txt`` (or a log message naming it)."""
    text = text.strip()
    if not text:
        return None
    m = _COMMAND_RE.search(text)
    cmd = m.group("cmd") if m else text
    try:
        argv = shlex.split(cmd)
    except ValueError:
        argv = cmd.split()
    return argv or None


def _option_pairs(argv: list[str]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--") and "=" in tok:
            out.append(tuple(tok.split("=", 1)))  # type: ignore[arg-type]
        elif tok.startswith("-") and not re.fullmatch(r"-O\d", tok):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is not None and not nxt.startswith("-"):
                out.append((tok, nxt))
                i += 1
            else:
                out.append((tok, None))
        elif tok.startswith("-"):
            out.append((tok, None))
        i += 1
    return out


def dropped_options(requested: list[str] | None, actual: list[str] | None) -> list[str]:
    """Options asked for that the command actually run lacks, or gives a different (right-most) value."""
    if not requested or not actual:
        return []
    effective: dict[str, str | None] = {}
    for opt, value in _option_pairs(actual):
        effective[opt] = value  # the right-most of competing options wins
    dropped = []
    for opt, value in _option_pairs(requested):
        if opt not in effective:
            dropped.append(opt if value is None else f"{opt} {value}")
        elif value is not None and effective[opt] != value:
            dropped.append(f"{opt} {value} (ran with {effective[opt]})")
    return dropped


def pass_path(logger: str | None, name: str) -> str:
    """Where a pass sits, the same for its start and end lines.

    The compiler logs a pass under its own logger (``sg0000/Tensorizer/BirCodeGenLoop``) or its
    parent's, and sometimes repeats the name (``root/Tensorizer/Tensorizer``).
    """
    parts = [p for p in (logger or "").split("/") if p]
    if not parts or parts[-1] != name:
        parts.append(name)
    while len(parts) > 1 and parts[-2] == parts[-1]:
        parts.pop()
    return "/".join(parts)


@dataclass
class PassTiming:
    name: str
    path: str | None
    started: str | None = None
    duration_s: float | None = None


@dataclass
class FirstError:
    """The error a failed job is summarised by, with the lines around it."""

    message: str
    line: str
    code: str | None = None
    help: str | None = None
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    rank: int = 0  # lower is more specific: 0 coded, 1 compiler error record, 2 Python exception

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("rank")
        return out


class CompilerLog:
    """Reads the merged output of a job line by line and keeps what the record and summary need.

    ``feed`` returns whether to keep the line (False for the second copy of a compiler record
    that arrived both on stdout and from ``log-neuron-cc.txt``) and the events the line implies.
    """

    def __init__(self) -> None:
        self.status: str | None = None
        self.exit_code: int | None = None
        self.pipeline: list[str] = []
        self.passes: dict[str, PassTiming] = {}
        self.codes: list[str] = []
        self.first_error: FirstError | None = None
        self.command: list[str] | None = None
        self.compiler_version: str | None = None
        self.lines = 0
        self.last_was_record = False
        self.duplicates_dropped = 0
        self._recent: deque[str] = deque(maxlen=CONTEXT_LINES)
        # Per record text: copies seen on stdout minus copies seen in the log file.
        self._balance: OrderedDict[str, int] = OrderedDict()

    def _is_duplicate(self, text: str, from_logfile: bool) -> bool:
        balance = self._balance.pop(text, 0)
        balance += -1 if from_logfile else 1
        duplicate = (balance >= 0) if from_logfile else (balance <= 0)
        if balance:
            self._balance[text] = balance
            if len(self._balance) > _DEDUP_MEMORY:
                self._balance.popitem(last=False)
        return duplicate

    def feed(self, line: str, *, from_logfile: bool = False) -> tuple[bool, list[dict[str, Any]]]:
        rec = parse_line(line)
        self.last_was_record = rec.is_record
        if rec.is_record and self._is_duplicate(line, from_logfile):
            self.duplicates_dropped += 1
            return False, []
        self.lines += 1
        events = self._understand(rec)
        if self.first_error is not None and len(self.first_error.after) < CONTEXT_LINES:
            self.first_error.after.append(line)
        self._note_error(rec, events)
        self._recent.append(line)
        return True, events

    def _understand(self, rec: LogRecord) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        msg = rec.message
        if rec.is_record:
            m = _PIPELINE_RE.match(msg)
            if m and not self.pipeline:
                self.pipeline = msg[m.start("passes"):].split()
                events.append({"type": "pipeline", "passes": list(self.pipeline)})
            m = _PASS_START_RE.match(msg)
            if m:
                path = pass_path(rec.logger, m.group("name"))
                self.passes.setdefault(path, PassTiming(m.group("name"), path)).started = rec.timestamp
                events.append({"type": "pass", "name": m.group("name"), "path": path, "state": "started",
                               "duration_s": None, "t": rec.timestamp})
            m = _PASS_END_RE.match(msg)
            if m:
                path = pass_path(rec.logger, m.group("name"))
                timing = self.passes.setdefault(path, PassTiming(m.group("name"), path))
                timing.duration_s = float(m.group("seconds"))
                events.append({"type": "pass", "name": m.group("name"), "path": path, "state": "finished",
                               "duration_s": timing.duration_s, "t": rec.timestamp})
            m = _VERSION_RE.search(msg)
            if m and self.compiler_version is None:
                self.compiler_version = m.group("version")
        m = _STATUS_RE.search(msg)
        if m and self.status is None:
            self.status = m.group("status")
            events.append({"type": "compiler_status", "status": self.status})
        m = _EXIT_RE.search(msg)
        if m and self.exit_code is None:
            self.exit_code = int(m.group("code"))
        if self.command is None and "neuronx-cc" in msg:
            m = _COMMAND_RE.search(msg)
            if m:
                self.command = command_from_text(m.group("cmd"))
        for code in rec.codes:
            if code not in self.codes:
                self.codes.append(code)
                events.append({"type": "compiler_error", "code": code, "message": msg.strip(), "line": rec.line})
        return events

    def _note_error(self, rec: LogRecord, events: list[dict[str, Any]]) -> None:
        if rec.codes and rec.level not in ("DEBUG", "INFO", "WARNING"):
            rank, code = 0, rec.codes[0]
        elif rec.level in _ERROR_LEVELS and rec.message.strip(" *"):
            rank, code = 1, None
        elif _PY_EXCEPTION_RE.match(rec.message) and not rec.is_record:
            rank, code = 2, None
        else:
            return
        if self.first_error is not None and self.first_error.rank <= rank:
            return
        if rank == 1 and not any(e["type"] == "compiler_error" for e in events):
            events.append({"type": "compiler_error", "code": None, "message": rec.message.strip(), "line": rec.line})
        self.first_error = FirstError(rec.message.strip(), rec.line, code, error_code_help(code) if code else None,
                                      before=list(self._recent), rank=rank)

    def summary(self) -> dict[str, Any]:
        """What job.json keeps about the compiler's output."""
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "exit_explanation": explain_exit_code(self.exit_code),
            "pipeline": list(self.pipeline),
            "passes": [asdict(p) for p in self.passes.values()],
            "error_codes": list(self.codes),
            "first_error": self.first_error.to_dict() if self.first_error else None,
            "command_from_log": self.command,
            "version_from_log": self.compiler_version,
            "lines": self.lines,
            "duplicate_records_dropped": self.duplicates_dropped,
        }
