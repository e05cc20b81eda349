"""Which compile a line belongs to, and the command line each one ran.

One file may hold several compiles: a training run compiles graph after graph, and the XLA wrapper
may start several at once and report their statuses in order. A compile starts with an announced
command (``Call compiler with cmd:``, the first record of a log file, ``Compiling with command line:``,
a shell prompt); its ``Compiler status`` lines are given out in order. A command the failure reports
(an internal-error block's ``Command line:``, ``Failed compilation with [...]``, a ``Command '[...]'
returned ...`` exception, a harness's panic quoting `` `neuronx-cc compile ...` exited with ...``) says
better than an announcement what actually ran.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from neffbench.compilerlog.lines import LogRecord

_CC = r"\S*neuronx?-cc"
_ANNOUNCE_RE = re.compile(
    rf"(?:Call compiler with cmd|Compiling with command line|Command line|Running command)\s*:\s*"
    rf"(?P<cmd>\[\s*'{_CC}'.*\]|['\"]?{_CC}\b.*)",
    re.IGNORECASE,
)
_BARE_RE = re.compile(rf"^(?P<cmd>{_CC}\s+\S.*)$")
_PROMPT_RE = re.compile(rf"\$\s+(?P<cmd>{_CC}\s+\S.*)$")
_FAILED_WITH_RE = re.compile(rf"Failed compilation with (?P<cmd>\[\s*'{_CC}'.*?\])")
_REPR_RE = re.compile(rf"Command '(?P<cmd>\[\s*'{_CC}'.*?\])' (?:returned|died)")
_BACKTICKS_RE = re.compile(rf"`(?P<cmd>{_CC}\s[^`]*)` (?:exited|failed|terminated|returned|was killed)")
_NOT_COMMANDS = ("Replay this job by calling", "Executing:")


def _joined(cmd: str) -> str:
    """A command as one line: a Python list repr joined with spaces, quotes around a string removed."""
    cmd = cmd.strip()
    if cmd.startswith("["):
        try:
            parts = ast.literal_eval(cmd)
        except (ValueError, SyntaxError):
            parts = [p.strip("'\" ") for p in cmd.strip("[]").split(",")]
        return " ".join(str(p) for p in parts)
    if cmd[:1] in "'\"" and cmd.endswith(cmd[:1]):
        cmd = cmd[1:-1]
    return cmd.strip()


def announced_command(rec: LogRecord, body: str) -> str | None:
    if body.startswith(_NOT_COMMANDS):
        return None
    m = _ANNOUNCE_RE.search(body)
    if m:
        return _joined(m.group("cmd"))
    if rec.logger == "root":
        m = _BARE_RE.match(body)
        if m:
            return m.group("cmd").strip()
    if not rec.is_record:
        m = _PROMPT_RE.search(body)
        if m:
            return m.group("cmd").strip()
    return None


def reported_command(body: str) -> str | None:
    m = _FAILED_WITH_RE.search(body) or _REPR_RE.search(body) or _BACKTICKS_RE.search(body)
    return _joined(m.group("cmd")) if m else None


@dataclass
class Compile:
    """One compiler invocation found in the output."""

    first_line: int
    status: str | None = None
    exit_code: int | None = None
    version: str | None = None
    announced: str | None = None
    reported: str | None = None
    errors: int = 0

    @property
    def command(self) -> str | None:
        return self.reported or self.announced


class Compiles:
    def __init__(self) -> None:
        self.all: list[Compile] = [Compile(first_line=1)]
        self.exits: list[int] = []  # every exit status stated, in file order
        self._waiting = 0  # statuses are given out in order: the first compile that may still lack one

    @property
    def latest(self) -> Compile:
        return self.all[-1]

    def announce(self, command: str, number: int) -> None:
        latest = self.latest
        if latest.announced is None:
            latest.announced = command
        elif latest.announced != command:  # the same command seen twice (stdout and log file) is one compile
            self.all.append(Compile(first_line=number, announced=command))

    def report(self, command: str) -> None:
        if self.latest.reported is None:
            self.latest.reported = command

    def set_status(self, status: str, number: int) -> None:
        while self._waiting < len(self.all) and self.all[self._waiting].status is not None:
            self._waiting += 1
        if self._waiting == len(self.all):
            self.all.append(Compile(first_line=number))
        self.all[self._waiting].status = status

    def set_exit(self, code: int) -> None:
        self.exits.append(code)
        if self.latest.exit_code is None or (self.latest.exit_code == 0 and code != 0):
            self.latest.exit_code = code

    def set_version(self, version: str) -> None:
        if self.latest.version is None:
            self.latest.version = version

    # ---- the file's summary ----

    def chosen(self) -> Compile | None:
        """The compile the file is summarised by: the first that did not pass, else the last with a status."""
        with_status = [c for c in self.all if c.status]
        return next((c for c in with_status if c.status != "PASS"), with_status[-1] if with_status else None)

    @property
    def status(self) -> str | None:
        chosen = self.chosen()
        return chosen.status if chosen else None

    @property
    def exit_code(self) -> int | None:
        return next((c for c in self.exits if c != 0), self.exits[0] if self.exits else None)

    @property
    def command(self) -> str | None:
        chosen = self.chosen()
        if chosen is not None and chosen.command:
            return chosen.command
        return next((c.command for c in reversed(self.all) if c.command), None)

    @property
    def version(self) -> str | None:
        return next((c.version for c in self.all if c.version), None)
