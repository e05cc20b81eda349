"""Which lines state an error, and how much each says about the cause.

The cause of a failed compile is rarely the first line that says ERROR: the compiler frames it in
a banner of asterisks and "An Internal Compiler Error has occurred", prints Python traceback frames
as ERROR records, and torch_neuronx ends with its own ``RuntimeError: neuronx-cc failed with 1``.
So errors are ranked, and the first error of the best rank is the one a job is summarised by:

0. an error that names an error code (``[NLA001]``, ``NCC_EOOM001``) at any level but DEBUG, INFO, WARNING;
1. a record at ERROR, CRITICAL or FATAL, and the cause an internal-error banner introduces;
2. a statement of failure on a line with no level: "Too many instructions after unroll!", an
   ``Error message:`` line, ``Killed``, the exception line that ends a traceback.

Each of those ranks ``HARNESS`` lower when it is not the compiler's own words but its caller's report
of the failure: the framework's records (the XLA wrapper's ``||NEURON_CC_WRAPPER||``, torch-neuron's
logging, TorchNeuron's ``[Neuron]``), XLA's glog (``F0000 ... Check failed``, ``Non-OK-status``), a Rust
panic, an exception raised outside the compiler, a line stating the compiler's exit status
(``RuntimeError: neuronx-cc failed with 70``, ``subprocess.CalledProcessError``). The caller only knows
that the compiler failed; the compiler says why. So when both are in the output the compiler's message
is the cause wherever the report stands, and with no message of the compiler's the report still is.

Traceback frames and their source lines, banners and the banner block's labels are never errors, nor
are the lines that start and end a pass (a pass named ``error_injector`` is a pass).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from neffbench.compilerlog import exits
from neffbench.compilerlog.lines import LogRecord, codes_in
from neffbench.compilerlog.passes import is_marker

ERROR_LEVELS = frozenset(("ERROR", "CRITICAL", "FATAL"))
QUIET_LEVELS = frozenset(("DEBUG", "INFO", "WARNING"))
CONTEXT_LINES = 4
OWN_PREFIX = "neffbench:"  # the workbench's own notes in job.log; the job record states them itself

BANNER_RE = re.compile(r"^[\s*=#-]*$|^\W*An Internal Compiler Error has occurred\W*$", re.IGNORECASE)
# Lines of the internal-error block that describe rather than state the failure.
_LABEL_RE = re.compile(
    r"^\s*(?:Error (?:class|location|type|id|file|line)\s*:|Command line\s*:|Internal details\s*:|Type: <class "
    r"|Version information\s*:|Diagnostic information\s*:|Diagnostic logs stored in|Artifacts stored in"
    r"|Please contact Customer Support)",
    re.IGNORECASE,
)
_INFO_BLOCK_RE = re.compile(r"^\s*(?:Version|Diagnostic) information\s*:", re.IGNORECASE)
MESSAGE_PREFIX_RE = re.compile(r"^\s*Error message\s*:\s*", re.IGNORECASE)
# TorchNeuron's exception around the compiler's captured stderr: the stderr is the message.
_TORCHNEURON_WRAP_RE = re.compile(r"^.*StableHLO to NEFF compilation failed.*? with exit code -?\d+:\s+(?=\S)")
_EXCEPTION_RE = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Fault|Traceback)"
    r"(?:\[\w+\])?(?::\s|:?$)"
)
HARNESS = 3  # what a caller's report adds to its rank (see above)
# Records of the programs around the compiler (glog only when not the compiler's own hlo2penguin, hilo/).
_HARNESS_KINDS = frozenset(("wrapper", "pylog", "asctime", "torchneuron"))
_PANIC_RE = re.compile(r"^thread '[^']*' panicked at ")
PANIC_HEAD_RE = re.compile(r"^thread '[^']*' panicked at [^']*$")  # Rust 1.73+: the payload is the next line
# Rust before 1.73: the payload quoted on the panic's own line, its location after it.
_OLD_PANIC_RE = re.compile(r"^thread '[^']*' panicked at '(?P<payload>.*)', [^\s']+:\d+(?::\d+)?\s*$")
_UNWRAP_RE = re.compile(r"^called `(?:Result|Option)::(?:unwrap|expect)\(\)` on an `(?:Err|None)` value:\s*")
_DEBUG_STRING_RE = re.compile(r'^[A-Za-z_][\w:]*\("(?P<text>.*)"\)$')  # an error enum's Debug: Compile("...")
COMPILER_FRAME_RE = re.compile(r'File "(?:[^"]*/)?neuronx?cc/')  # a traceback frame in the compiler's own code
_COMPILER_EXCEPTION_RE = re.compile(r"^neuronx?cc\.")  # neuronxcc.driver.Exceptions...: raised by the compiler
_FAILURE_WORDS = ("error", "fail", "too many", "exceed", "supported", "crash", "abort", "killed", "fault")
_FAILURE_RE = re.compile(
    r"(?i:\b(?:error|fail|too many|exceed|not supported|unsupported|crash|abort|killed|fault))"
    r"|(?<=[a-z])Error\b"
)


def panic_message(payload: str) -> str | None:
    """The compiler's own message a Rust panic's payload quotes, from its code on (``[NCC_EVRF001] Operator sort is
    not supported ...``), or None when it quotes no coded message (it then only reports that the compiler failed).
    The payload is the panic's next line (Rust 1.73+) or the quoted text on its own line (earlier)."""
    old = _OLD_PANIC_RE.match(payload)
    text = _UNWRAP_RE.sub("", (old["payload"] if old else payload).strip())
    debug = _DEBUG_STRING_RE.match(text)
    if debug:
        text = debug["text"].replace('\\"', '"').replace("\\n", "\n")
    codes = codes_in(text)
    if not codes:
        return None
    bracketed = text.find("[" + codes[0])
    return text[bracketed if bracketed >= 0 else text.find(codes[0]) :].strip()


def states_failure(body: str) -> bool:
    low = body.lower()
    # The words first, in C; the regex (word starts: "default" is no fault) only for the few lines that have one.
    return any(w in low for w in _FAILURE_WORDS) and _FAILURE_RE.search(body) is not None


# Lines that always stand alone: the end of a process, or a failure the compiler prints by itself.
STANDALONE_RE = re.compile(
    r"^(?:Aborted|Segmentation fault|Killed|Bus error)(?: \(core dumped\))?\s*$"
    r"|^Fatal Python error:|^terminate called after throwing|^\[[A-Z]{1,5}\d{3,4}\]|^\[ERROR\]"
    r"|^\s*Error message\s*:|^thread '[^']*' panicked at ",
    re.IGNORECASE,
)

# Traceback pieces: headers, frames (Python, Cython, faulthandler, IPython, C++ backtraces) and carets.
TRACEBACK_HEAD_RE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|\S*(?:Error|Exception)\s+Traceback \(most recent call last\)"
    r"|Current thread 0x[0-9a-f]+ \(most recent call first\)|concurrent\.futures\.process\._RemoteTraceback:"
    r"|\"\"\"\s*$|-{5,}\s*$|During handling of the above exception|The above exception was the direct cause"
    r"|\*\*\* Begin stack trace \*\*\*|stack backtrace:|note: run with `RUST_BACKTRACE)"
)  # C++ (XLA) and Rust stacks
_FRAME_RE = re.compile(
    r'^\s*(?:File "[^"]*", line \d+,? in |File <[^>]*>:\d+|File /\S+:\d+, in |Cell In\[\d+\], line \d+'
    r"|\d+# |\^[\s^~]*$)"
)
# IPython's numbered source lines: pieces only inside a traceback ("5 names were undefined" is not one).
_TB_SOURCE_RE = re.compile(r"^\s*(?:-*> ?)?\d+ |^\s*\(\.\.\.\)\s*$")


@dataclass
class LogError:
    """One error in the output. ``line`` is where it starts (1-based); ``text`` that line as read."""

    code: str | None
    message: str
    level: str | None
    line: int
    text: str
    rank: int
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    record: LogRecord | None = None  # its record, for continuation records (not part of its description)

    def to_json(self) -> dict[str, Any]:
        """The shape ``neffbench explain --json`` promises."""
        return {"code": self.code, "message": self.message, "level": self.level, "line": self.line}

    def to_record(self) -> dict[str, Any]:
        """The shape job.json's ``error`` has always had (``line`` the text), plus level and line number."""
        from neffbench.compilerlog.codes import lookup

        found = lookup(self.code) if self.code else None
        return {
            "message": self.message,
            "line": self.text,
            "code": self.code,
            "help": f"{found.title}; docs: {found.url}" if found else None,
            "before": list(self.before),
            "after": list(self.after),
            "level": self.level,
            "line_number": self.line,
        }


class Block:
    """The internal-error block after a banner: its logger and pid, and what has been seen in it."""

    def __init__(self, rec: LogRecord):
        self.logger, self.pid = rec.logger, rec.pid
        self.cause_found = False
        self.in_info = False  # inside "Version information:" / "Diagnostic information:"

    def holds(self, rec: LogRecord) -> bool:
        return rec.is_record and (rec.logger, rec.pid) == (self.logger, self.pid)


def is_frame(text: str) -> bool:
    return bool(_FRAME_RE.match(text))


def is_traceback_source(text: str) -> bool:
    return bool(_TB_SOURCE_RE.match(text))


def is_label(body: str) -> bool:
    return bool(_LABEL_RE.match(body))


def opens_info_block(body: str) -> bool:
    return bool(_INFO_BLOCK_RE.match(body))


def is_exception_line(body: str) -> bool:
    return bool(_EXCEPTION_RE.match(body))


def by_harness(rec: LogRecord, body: str, *, raised_in_compiler: bool = False) -> bool:
    """True when the line is the compiler's caller reporting the failure, not the compiler's own words.

    ``raised_in_compiler``: the line closes a traceback whose innermost frame is the compiler's code.
    """
    kind = rec.kind
    if kind in _HARNESS_KINDS:
        return True
    if kind == "glog":
        return not (rec.logger or "").startswith("hilo/")
    if kind != "plain" or (rec.codes and body.startswith("[" + rec.codes[0])):
        return False  # the compiler's records, and the lines it opens with a code ([F134] ..., [F137] ...)
    if _PANIC_RE.match(body) or exits.reported_by_caller(body):
        return True
    return _EXCEPTION_RE.match(body) is not None and not raised_in_compiler and not _COMPILER_EXCEPTION_RE.match(body)


def classify(
    rec: LogRecord, body: str, *, after_traceback: bool = False, raised_in_compiler: bool = False
) -> tuple[int, str] | None:
    """(rank, message) when ``body`` (the record's stripped message) states an error, else None."""
    if not body or BANNER_RE.match(body) or _LABEL_RE.match(body) or body.startswith("Compiler status "):
        return None
    level = rec.level
    if level in QUIET_LEVELS:
        return None
    if rec.kind == "glog" and (rec.logger or "").startswith("tensorflow/"):
        return None  # the XLA client repeating the compiler's failure, with C++ stacks
    message = MESSAGE_PREFIX_RE.sub("", body)
    compiler_stderr = False
    if "StableHLO to NEFF" in message:
        unwrapped = _TORCHNEURON_WRAP_RE.sub("", message)
        compiler_stderr, message = unwrapped != message, unwrapped  # the compiler's words, quoted whole
    rank = _rank(rec, body, after_traceback)
    if rank is None or (rank == 1 and not message):
        return None  # an ERROR record that is only "Error message:" says nothing yet
    if not rec.is_record and _OLD_PANIC_RE.match(body):
        quoted = panic_message(body)
        if quoted is not None:  # the compiler's message, quoted by the panic: the message is the error
            return 0, quoted
    if not compiler_stderr and by_harness(rec, body, raised_in_compiler=raised_in_compiler):
        rank += HARNESS
    return rank, message


def _rank(rec: LogRecord, body: str, after_traceback: bool) -> int | None:
    if rec.codes:
        return 0
    if rec.level in ERROR_LEVELS:
        return 1
    if rec.level is not None:
        return None  # USER without a code: progress the compiler shows at its default verbosity
    if rec.kind not in ("plain", "iso", "old") or is_marker(body):
        return None  # a pass's start and end say nothing of failure, whatever the pass is called
    if STANDALONE_RE.match(body) or states_failure(body) or (after_traceback and _EXCEPTION_RE.match(body)):
        return 2
    return None
