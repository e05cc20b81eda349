"""The log as a terminal shows it while jobs run: every line, but a Python traceback as one line pointing at job.log.

The traceback of a failed job is the workbench's own code and the compiler's bindings; the job's one-sentence
summary and its first error say what happened (and where in the user's code), and job.log keeps every frame.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from neffbench.usercode.tracebacks import TracebackLines
from neffbench.words import plural

_PREFIX_RE = re.compile(r"^(\[[^\]]*\] )?(.*)$", re.DOTALL)


class _Open:
    """A traceback being folded: how many lines it has had, and its last exception's name."""

    def __init__(self) -> None:
        self.folded = 1
        self.last: str | None = None


class TracebackFolder:
    """Wraps an ``on_line`` callback; jobs running at once (lines prefixed ``[bucket] ``) are folded apart.

    A traceback (with the exceptions chained to it) ends at the first line that is none of its parts; that line
    is written after one line saying how long the traceback was and what it ended in.
    """

    def __init__(self, write: Callable[[str], None]):
        self._write = write
        self._readers: dict[str, TracebackLines] = {}  # prefix -> what its lines are
        self._open: dict[str, _Open] = {}  # prefix -> its traceback being folded

    def __call__(self, line: str) -> None:
        match = _PREFIX_RE.match(line)
        assert match is not None  # the pattern matches any line
        prefix, text = (match[1] or ""), match[2]
        reader = self._readers.setdefault(prefix, TracebackLines())
        part = reader.read(text)
        state = self._open.get(prefix)
        if part.kind == "head":
            if state is None:
                self._open[prefix] = _Open()
            else:
                state.folded += 1
            return
        if state is not None:
            if part.kind != "text":
                state.folded += 1
                state.last = part.exception or state.last
                return
            self._flush(prefix)
        self._write(line)

    def close(self) -> None:
        for prefix in list(self._open):
            self._flush(prefix)

    def _flush(self, prefix: str) -> None:
        state = self._open.pop(prefix)
        ending = f", ending in {state.last}," if state.last else ""
        self._write(
            f"{prefix}neffbench: (a Python traceback of {plural(state.folded, 'line')}{ending} is in the job's job.log)"
        )
