"""Reading compiler output line by line, live (a running job) or from a file (``neffbench explain``).

``CompilerLog.feed`` takes one line at a time and keeps what a job record and an explanation need:
each compile's status, exit status, version and command (compiles.py); every run of every pass
(passes.py); every error, ranked, with its continuation lines and the lines around it (errors.py);
the error codes. It follows three kinds of block as it goes: a Python traceback (its frames are not
errors, its closing exception line is), the compiler's internal-error block (its first plain
statement after the banner is the cause), and a multi-line message (its continuation lines belong
to the error above them).
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from dataclasses import asdict
from typing import Any

from neffbench.compilerlog import exits
from neffbench.compilerlog.compiles import Compile, Compiles, announced_command, reported_command
from neffbench.compilerlog.errors import (
    BANNER_RE,
    COMPILER_FRAME_RE,
    CONTEXT_LINES,
    ERROR_LEVELS,
    HARNESS,
    MESSAGE_PREFIX_RE,
    OWN_PREFIX,
    PANIC_HEAD_RE,
    STANDALONE_RE,
    TRACEBACK_HEAD_RE,
    Block,
    LogError,
    classify,
    is_frame,
    is_label,
    is_traceback_source,
    opens_info_block,
    panic_message,
    states_failure,
)
from neffbench.compilerlog.lines import LogRecord, codes_in, glued_record, parse_line
from neffbench.compilerlog.passes import PassRun, PassTracker, is_marker
from neffbench.compilerlog.scan import is_boring

_PIPELINE_RE = re.compile(r"^Pipeline:\s*(?P<passes>.+)$")
_STATUS_RE = re.compile(r"Compiler status (?P<status>PASS|FAIL|ERROR)\b")
_VERSION_RE = re.compile(r"Neuron(?:X)? Compiler version (?P<version>\S+)")
_DOTS_RE = re.compile(r"^\.+$")
INTERNAL_ERROR_RE = re.compile(r"An Internal Compiler Error has occurred", re.IGNORECASE)
_DEDUP_MEMORY = 20_000
_CONTEXT_KEPT = 50  # errors that keep the lines around them; the rest keep their own line only
# What plain lines after a record continue when that record is not an error: they are its message's
# further lines ("error: could not open input file" under an INFO record is not an error).
_SWALLOW = LogError(None, "", None, 0, "", 9)


class CompilerLog:
    """The understanding of one output stream so far.

    ``feed`` returns whether to keep the line (False for the second copy of a compiler record that
    arrived both on stdout and from ``log-neuron-cc.txt``) and the events the line implies.
    """

    def __init__(self, *, dedup: bool = True) -> None:
        self.dedup = dedup  # off for a file read on its own: only a live job merges two copies of the output
        self.compile_set = Compiles()
        self._stated: list[LogError] = []  # every error the output states (see ``errors``)
        self._internal: LogError | None = None  # the first internal-error banner, an error when nothing else is
        # A line just above an internal-error banner that states a failure (``HLO import failed ...``): the
        # compiler's own words for what went wrong before it gave up, often the root cause.
        self.cause_above_internal_error: tuple[int, str] | None = None
        self._recent_records: deque[tuple[int, LogRecord]] = deque(maxlen=CONTEXT_LINES)
        self.codes: list[str] = []
        self.pipeline: list[str] = []
        self.pass_tracker = PassTracker()
        self.lines = 0
        self.last_was_record = False
        self.duplicates_dropped = 0
        self._first: LogError | None = None
        self._recent: deque[str] = deque(maxlen=CONTEXT_LINES)
        self._waiting_after: list[LogError] = []
        self._continuing: LogError | None = None
        self._in_traceback = False
        self._raised_in_compiler = False  # the traceback's innermost frame so far is the compiler's
        self._block: Block | None = None
        self._balance: OrderedDict[str, int] = OrderedDict()

    # ---- what callers read ------------------------------------------------------------------

    compiles = property(lambda self: self.compile_set.all)
    current = property(lambda self: self.compile_set.latest)
    first_error = property(lambda self: self._first or self._internal)
    status = property(lambda self: self.compile_set.status)
    exit_code = property(lambda self: self.compile_set.exit_code)
    compiler_version = property(lambda self: self.compile_set.version)
    command_line = property(lambda self: self.compile_set.command)

    @property
    def errors(self) -> list[LogError]:
        """Every error the output states, in order; with none, an internal-error banner it gives no cause for
        (the banner alone still says the compile failed)."""
        return self._stated if self._stated or self._internal is None else [self._internal]

    @property
    def passes(self) -> list[PassRun]:
        return self.pass_tracker.runs

    @property
    def command(self) -> list[str] | None:
        from neffbench.compilerlog.commands import command_from_text

        return command_from_text(self.command_line) if self.command_line else None

    # ---- reading ------------------------------------------------------------------------------

    def _is_duplicate(self, text: str, from_logfile: bool) -> bool:
        balance = self._balance.pop(text, 0)
        balance += -1 if from_logfile else 1
        duplicate = (balance >= 0) if from_logfile else (balance <= 0)
        if balance:
            self._balance[text] = balance
            if len(self._balance) > _DEDUP_MEMORY:
                self._balance.popitem(last=False)
        return duplicate

    def gap(self) -> None:
        """Lines were left out here (boring ones, see scan.py): what they would have ended, ends."""
        self._continuing, self._in_traceback = _SWALLOW, False
        if self._block is not None and not self._block.in_info:
            self._block = None

    def feed(
        self, line: str, *, from_logfile: bool = False, line_no: int | None = None
    ) -> tuple[bool, list[dict[str, Any]]]:
        boring = is_boring(line)
        rec = None if boring else parse_line(line)
        if rec is not None and not rec.is_record:
            glued = glued_record(line)
            if glued is not None:
                rec = parse_line(glued)
        self.last_was_record = boring or (rec is not None and rec.is_record)
        if self.dedup and self.last_was_record and self._is_duplicate(line, from_logfile):
            self.duplicates_dropped += 1
            return False, []
        self.lines += 1
        number = line_no if line_no is not None else self.lines
        if self._waiting_after:
            for err in self._waiting_after:
                err.after.append(line)
            self._waiting_after = [e for e in self._waiting_after if len(e.after) < CONTEXT_LINES]
        events: list[dict[str, Any]] = []
        if rec is None:
            self.gap()
        else:
            self._understand(rec, number, events)
            self._recent_records.append((number, rec))
        self._recent.append(line)
        return True, events

    def _understand(self, rec: LogRecord, number: int, events: list[dict[str, Any]]) -> None:
        msg = rec.message
        body = msg.strip()
        if not rec.is_record and body.startswith(OWN_PREFIX):
            self._continuing = None  # the workbench's own lines: job.json says what they say
            return
        block = self._block
        if block is not None and rec.is_record and not block.holds(rec):
            self._block = block = None
        if (
            self._piece_of_traceback(msg, body)
            or self._panic_payload(rec, body, number, events)
            or self._continues(rec, msg, body, events)
        ):
            return
        self._continuing = _SWALLOW if rec.is_record else None
        after_traceback = self._in_traceback
        self._in_traceback = False
        self._markers(rec, body, number, events, in_block=block is not None and block.holds(rec))
        self._note_codes(rec, body, events)
        if rec.level in ERROR_LEVELS and BANNER_RE.match(body) and body:
            self._block = Block(rec)
            if INTERNAL_ERROR_RE.search(body):
                self._internal_error(rec, number, body)
            return
        if block is not None and block.holds(rec) and not self._in_block(block, rec, body, number, events):
            return
        found = classify(
            rec, body, after_traceback=after_traceback, raised_in_compiler=after_traceback and self._raised_in_compiler
        )
        if found is not None:
            self._add_error(rec, number, *found, events)

    def _internal_error(self, rec: LogRecord, number: int, body: str) -> None:
        """The banner's "An Internal Compiler Error has occurred": kept, in case the output states no error of its
        own; and the line just above the banner, when it states a failure, noted as the likely root cause."""
        if self._internal is None:
            self._internal = LogError(None, body.strip(" *"), rec.level, number, rec.line, 1, record=rec)
            self._internal.before = list(self._recent)
            self._waiting_after.append(self._internal)
        if self.cause_above_internal_error is not None:
            return
        for above, previous in reversed(self._recent_records):
            text = previous.message.strip()
            if not text or BANNER_RE.match(text):
                continue  # the banner's own asterisks and blank records
            if (states_failure(text) or previous.codes) and not is_marker(text):
                self.cause_above_internal_error = (above, text)
            return

    def _note_codes(self, rec: LogRecord, body: str, events: list[dict[str, Any]]) -> None:
        for code in rec.codes:
            if code not in self.codes:
                self.codes.append(code)
                events.append({"type": "compiler_error", "code": code, "message": body, "line": rec.line})

    def _in_block(self, block: Block, rec: LogRecord, body: str, number: int, events: list[dict[str, Any]]) -> bool:
        """False when the block's rules settle the line (not an error); True to classify it as usual."""
        if not body:
            if rec.line.endswith((":", ": ")):  # an empty message ends an information block; "   " does not
                block.in_info = False
            return False
        if block.in_info or is_label(body):
            block.in_info = block.in_info or opens_info_block(body)
            if body.lower().startswith("command line"):
                self.compile_set.report(body.split(":", 1)[1].strip())
            return False
        if block.cause_found or BANNER_RE.match(body):
            return True
        block.cause_found = True
        self._add_error(rec, number, 0 if rec.codes else 1, MESSAGE_PREFIX_RE.sub("", body), events)
        return False

    def _piece_of_traceback(self, msg: str, body: str) -> bool:
        """True for the lines of a traceback that are not its closing exception line."""
        if TRACEBACK_HEAD_RE.match(body):
            self._in_traceback, self._continuing, self._raised_in_compiler = True, None, False
            return True
        if is_frame(msg):
            self._in_traceback, self._continuing = True, None
            self._raised_in_compiler = COMPILER_FRAME_RE.search(msg) is not None
            return True
        if not self._in_traceback:
            return False
        return not body or msg[:1].isspace() or is_traceback_source(msg)

    def _continues(self, rec: LogRecord, msg: str, body: str, events: list[dict[str, Any]]) -> bool:
        err = self._continuing
        if err is None:
            return False
        if rec.is_record:
            prev = err.record
            # The same thread's record too: another thread's indented record does not continue this one.
            same = (
                prev is not None
                and prev.is_record
                and (rec.level, rec.pid, rec.tid, rec.context, rec.logger)
                == (prev.level, prev.pid, prev.tid, prev.context, prev.logger)
            )
            if not (same and msg.startswith("  ") and body):
                return False
        elif (
            not body
            or _DOTS_RE.match(body)
            or _STATUS_RE.search(body)
            or STANDALONE_RE.match(body)
            or exits.exit_status_in(body) is not None
        ):
            return False
        self._extend(err, rec, body, events)
        return True

    def _extend(self, err: LogError, rec: LogRecord, body: str, events: list[dict[str, Any]]) -> None:
        # A code on a further line is the message's, and the error's when it had none (the hard wrap of
        # a paste, or the message's own line break, pushed it down).
        self._note_codes(rec, body, events)
        if err is _SWALLOW:
            return
        err.message = f"{err.message}\n{body}"
        if err.code is None and rec.codes:
            err.code, err.rank = rec.codes[0], HARNESS if err.rank >= HARNESS else 0
            if self._first is not None and err.rank < self._first.rank:
                self._first = err

    def _panic_payload(self, rec: LogRecord, body: str, number: int, events: list[dict[str, Any]]) -> bool:
        """The line after a Rust panic's header is its payload, whatever it says (often the command and
        how it exited, which the markers still read)."""
        err = self._continuing
        # Cheapest first: this runs for every line an error is continuing on, and messages can grow long.
        if (
            err is None
            or rec.is_record
            or not body
            or err.level is not None
            or not err.message.startswith("thread '")
            or "\n" in err.message
            or PANIC_HEAD_RE.match(err.message) is None
        ):
            return False
        self._markers(rec, body, number, events, in_block=False)
        self._extend(err, rec, body, events)
        quoted = panic_message(body)
        if quoted is not None:  # the compiler's own message inside the panic: it is the error, not the panic
            err.message, err.code, err.rank = quoted, codes_in(quoted)[0], 0
            if self._first is None or err.rank < self._first.rank:
                self._first = err
        return True

    def _markers(self, rec: LogRecord, body: str, number: int, events: list[dict[str, Any]], *, in_block: bool) -> None:
        if rec.is_record:
            m = _PIPELINE_RE.match(body)
            if m and not self.pipeline:
                self.pipeline = m.group("passes").split()
                events.append({"type": "pipeline", "passes": list(self.pipeline)})
            event = self.pass_tracker.feed(rec, body)
            if event is not None:
                events.append(event)
        if "ompiler version" in body:
            m = _VERSION_RE.search(body)
            if m:
                self.compile_set.set_version(m.group("version"))
        if "-cc" in body:
            cmd = reported_command(body)
            if cmd:
                self.compile_set.report(cmd)
            elif not in_block:  # the block's "Command line:" reports what ran (see _in_block)
                cmd = announced_command(rec, body)
                if cmd:
                    self.compile_set.announce(cmd, number)
        m = _STATUS_RE.search(body)
        if m:
            self.compile_set.set_status(m.group("status"), number)
            events.append({"type": "compiler_status", "status": m.group("status")})
        code = exits.exit_status_in(body)
        if code is not None:
            self.compile_set.set_exit(code)

    def _add_error(self, rec: LogRecord, number: int, rank: int, message: str, events: list[dict[str, Any]]) -> None:
        err = LogError(rec.codes[0] if rec.codes else None, message, rec.level, number, rec.line, rank, record=rec)
        if len(self._stated) < _CONTEXT_KEPT:
            err.before = list(self._recent)
            self._waiting_after.append(err)
        self._stated.append(err)
        self.current.errors += 1
        self._continuing = err
        if self._first is None or rank < self._first.rank:
            self._first = err
            if not err.before:
                err.before = list(self._recent)
                self._waiting_after.append(err)
            if rank and not any(e["type"] == "compiler_error" for e in events):
                events.append({"type": "compiler_error", "code": None, "message": message, "line": rec.line})

    # ---- results ------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """What job.json keeps about the compiler's output."""
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "exit_explanation": exits.meaning(self.exit_code),
            "pipeline": list(self.pipeline),
            # Runs that never finished (the compile died in them) too: the window shows where it stopped.
            "passes": [asdict(p) for p in self.passes + self.pass_tracker.unfinished()],
            "error_codes": list(self.codes),
            "first_error": self._first.to_record() if self._first else None,
            "errors": len(self.errors),
            "command_from_log": self.command,
            "version_from_log": self.compiler_version,
            "compiles": len(self.compiles),
            "lines": self.lines,
            "duplicate_records_dropped": self.duplicates_dropped,
        }


__all__ = ["Compile", "CompilerLog"]
