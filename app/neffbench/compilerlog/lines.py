"""One line of compiler output, whichever tool wrote it, split into its fields.

The forms met in real output (synthetic examples of each are in tests/data/compiler_logs/):

- neuronx-cc today: ``2024-12-04T01:01:23Z INFO 10200 [root]: message``, sometimes with milliseconds, a
  thread id after the pid (``... ERROR 10200 140121 [Tensorizer]: ...``) or no level at all;
- neuron-cc and early neuronx-cc: ``06/16/2021 04:16:55 PM INFO [12345] [WalrusDriver]: message``, the
  ``[pid]`` optional, a thread id after it as in the ISO form;
- the framework's wrapper around the compiler (torch-neuronx on XLA, optimum-neuron):
  ``2024-04-12 07:13:06.000297:  271334  ERROR ||NEURON_CC_WRAPPER||: message`` (also ``||NCC_WRAPPER||``,
  ``||NEURON_CACHE||``...);
- Python's logging default: ``ERROR:Neuron:message``;
- glog/absl as XLA and PJRT print it: ``F0304 10:11:12.345678  4242 debug_macros.h:20] message`` (the
  letter is the level, the number after the time a thread id; ``F0000 00:00:...`` when the clock is not set);
- TorchNeuron's own log (``TORCH_NEURONX_LOG_FILE``): ``[Neuron] [INFO] [file.cpp:88] [NEFF_CACHE] message``,
  the source location optional.

Anything else is a plain line (progress dots, ``Compiler status PASS``, tracebacks, print output).
A record glued onto other output (``....2024-...Z ERROR ...``) is split off by ``split_glued``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEVELS = ("DEBUG", "INFO", "USER", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL")
_LEVEL = "|".join(LEVELS)

_ISO_TS = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
_ISO_RE = re.compile(
    rf"(?P<ts>{_ISO_TS})\s+(?:(?P<level>{_LEVEL})\s+)?(?:(?P<pid>\d+)\s+)?(?:(?P<tid>\d+)\s+)?"
    r"(?:\((?P<context>[^)\s]*)\)\s+)?(?:\[(?P<logger>[^\]]*)\]:\s?)?(?P<message>.*)"
)
_WRAPPER_RE = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?):?\s+(?:(?P<pid>\d+)\s+)?(?:(?P<tid>\d+)\s+)?"
    rf"(?P<level>{_LEVEL})\s+\|\|(?P<logger>[A-Za-z0-9_]+)\|\|:?\s?(?P<message>.*)"
)
# A thread id only where a logger follows, as in the ISO form: otherwise the number starts the message.
_OLD_RE = re.compile(
    rf"(?P<ts>\d{{2}}/\d{{2}}/\d{{4}} \d{{2}}:\d{{2}}:\d{{2}}(?: [AP]M)?)\s+(?:(?P<level>{_LEVEL})\s+)?"
    r"(?:\[?(?P<pid>\d+)\]?\s+)?(?:(?P<tid>\d+)\s+(?=\[[^\]]*\]:))?(?:\[(?P<logger>[^\]]*)\]:\s?)?(?P<message>.*)"
)
_PYLOG_RE = re.compile(r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[\w.\-]+):(?P<message>.*)")
# torch-neuron's logging.basicConfig form: "2023-12-29 11:39:47,031 - Neuron - INFO - message".
_ASCTIME_RE = re.compile(
    rf"(?P<ts>\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}},\d+) - (?P<logger>[\w.\-]+) - (?P<level>{_LEVEL}) - (?P<message>.*)"
)
# glog from the compiler's native tools: "2025-01-01 10:00:00.000123: I hilo/x.cc:12] [WARNING] message".
_GLOG_RE = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+):\s+(?P<letter>[IWEF])\s+(?P<logger>\S+:\d+)\]\s?"
    rf"(?:\[(?P<level>{_LEVEL})\]\s?)?(?P<message>.*)"
)
# glog/absl's own layout, as XLA, PJRT and torch-xla print it: level letter, date, time, thread id, file:line.
_ABSL_RE = re.compile(
    r"(?P<letter>[IWEF])(?P<ts>\d{4} \d{2}:\d{2}:\d+(?:\.\d+)?)\s+(?P<tid>\d+) "
    r"(?P<logger>[^\s\]]+:\d+)\]\s?(?P<message>.*)"
)
# Newer stdout: "[ERROR] [NCC_EVRF029] message".
_BRACKET_LEVEL_RE = re.compile(rf"\[(?P<level>{_LEVEL})\]\s(?P<message>.*)")
# TorchNeuron's NeuronLogger: "[Neuron] [WARNING] [/src/KernelExecution.cpp:88] message" (logger: the location).
_TORCHNEURON_RE = re.compile(rf"\[Neuron\] \[(?P<level>{_LEVEL})\](?: \[(?P<logger>[^\]\s]+:\d+)\])?\s?(?P<message>.*)")
_GLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}
_FORMS = (
    ("iso", _ISO_RE),
    ("wrapper", _WRAPPER_RE),
    ("asctime", _ASCTIME_RE),
    ("glog", _GLOG_RE),
    ("old", _OLD_RE),
    ("pylog", _PYLOG_RE),
    ("glog", _ABSL_RE),
    ("torchneuron", _TORCHNEURON_RE),
    ("bracket", _BRACKET_LEVEL_RE),
)

# A record start inside a line; only split there when what follows really is a record.
_GLUED_RE = re.compile(
    rf"{_ISO_TS}\s+(?:{_LEVEL})\s|\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}\.\d+:\s+(?:\d+\s+)?(?:{_LEVEL})\s+\|\|"
    rf"|\d{{2}}/\d{{2}}/\d{{4}} \d{{2}}:\d{{2}}:\d{{2}} [AP]M\s+(?:{_LEVEL})\s"
)

# [NLA001], [XTP002], [TEN404], [F134]. Logger names ([root], [job.Frontend.0], [sg0000/Tensorizer])
# never have this letters-then-digits shape.
BRACKET_CODE_PATTERN = r"\[([A-Z]{1,5}\d{3,4})\]"
_BRACKET_CODE_RE = re.compile(BRACKET_CODE_PATTERN)
_NCC_CODE_RE = re.compile(r"\b(NCC_[A-Z]{2,10}\d{3,4})\b")


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One line; fields other than ``line``, ``message`` and ``kind`` are None for plain lines."""

    line: str
    message: str
    kind: str = "plain"  # iso | wrapper | asctime | glog (both layouts) | old | pylog | torchneuron | bracket | plain
    timestamp: str | None = None
    level: str | None = None
    pid: int | None = None
    tid: int | None = None
    logger: str | None = None
    codes: tuple[str, ...] = ()
    context: str | None = None  # "(nc00/sg00)" between pid and logger: the module a forked pass works on

    @property
    def is_record(self) -> bool:
        return self.kind != "plain"


def codes_in(text: str) -> tuple[str, ...]:
    """Error codes in ``text``, in order: bracketed ones without brackets, NCC_ ones whole."""
    if "[" not in text and "NCC_" not in text:
        return ()
    found = _BRACKET_CODE_RE.findall(text) + _NCC_CODE_RE.findall(text)
    if len(found) > 1:
        found.sort(key=text.find)
    return tuple(dict.fromkeys(found))


def parse_line(line: str) -> LogRecord:
    """Split a line into its fields (any line is accepted, and none raises)."""
    codes = codes_in(line)
    first = line[:1]
    forms: tuple[tuple[str, re.Pattern[str]], ...]
    if first.isdigit():
        forms = _FORMS[:5]
    elif first in "DIWECF":
        forms = _FORMS[5:7]
    elif first == "[":
        forms = _FORMS[7:]
    else:
        return LogRecord(line, line.rstrip(), codes=codes)
    for kind, rx in forms:
        m = rx.match(line)
        if m is None:
            continue
        groups = m.groupdict()
        level = groups.get("level") or _GLOG_LEVELS.get(groups.get("letter") or "")
        pid, tid, message = groups.get("pid"), groups.get("tid"), m.group("message")
        if kind == "iso" and groups["logger"] is None and groups["context"] is None:
            # Numbers are a pid and a thread id only before a [logger] or (context): in a record with
            # neither ("<ISO>Z 3 instructions ...") they start the message.
            if level is None and pid:
                pid, tid, message = None, None, line[m.start("pid") :]
            elif tid:
                tid, message = None, line[m.start("tid") :]
        return LogRecord(
            line=line,
            message=message.rstrip(),  # leading blanks kept: they mark traceback source lines
            kind=kind,
            timestamp=groups.get("ts"),
            level="WARNING" if level == "WARN" else level,
            pid=int(pid) if pid else None,
            tid=int(tid) if tid else None,
            logger=groups.get("logger"),
            codes=codes,
            context=groups.get("context"),
        )
    return LogRecord(line, line.rstrip(), codes=codes)


def glued_record(line: str) -> str | None:
    """The record glued onto other output in ``line`` (``....2024-...Z ERROR ...``), or None.

    Only for a line that does not start with a record: a timestamp inside a record's message does
    not start another. The text before the record is progress output, a prompt, another program's.
    """
    if len(line) < 24 or not ("Z " in line or "||" in line or "M " in line):
        return None  # every record form it looks for holds one of these
    m = _GLUED_RE.search(line, 1)
    return line[m.start() :] if m else None
