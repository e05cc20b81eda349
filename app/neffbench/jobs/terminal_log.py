"""The log as a terminal shows it while jobs run: every line, but a Python traceback as one line pointing at job.log.

The traceback of a failed job is the workbench's own code and the compiler's bindings; the job's one-sentence
summary and its first error say what happened (and where in the user's code), and job.log keeps every frame.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from neffbench.words import plural

_PREFIX_RE = re.compile(r"^(\[[^\]]*\] )?(.*)$", re.DOTALL)
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
# ``KernelError: ...`` or ``torch.OutOfMemoryError`` alone: exception class names are CamelCase.
_EXCEPTION_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Z]\w*)(?::\s.*)?$")


class TracebackFolder:
    """Wraps an ``on_line`` callback; jobs running at once (lines prefixed ``[bucket] ``) are folded apart.

    A traceback (with the exceptions chained to it) ends at the first line that is none of its parts; that line
    is written after one line saying how long the traceback was and what it ended in.
    """

    def __init__(self, write: Callable[[str], None]):
        self._write = write
        self._open: dict[str, list] = {}  # prefix -> [lines folded, last exception's name]

    def __call__(self, line: str) -> None:
        match = _PREFIX_RE.match(line)
        assert match is not None  # the pattern matches any line
        prefix, text = (match[1] or ""), match[2]
        state = self._open.get(prefix)
        if text.startswith("Traceback (most recent call last):"):
            if state is None:
                self._open[prefix] = [1, None]
            else:
                state[0] += 1
            return
        if state is not None:
            exception = _EXCEPTION_RE.match(text)
            if text.startswith((" ", "\t")) or not text.strip() or text.startswith(_CHAIN) or exception:
                state[0] += 1
                if exception:
                    state[1] = exception[1]
                return
            self._flush(prefix)
        self._write(line)

    def close(self) -> None:
        for prefix in list(self._open):
            self._flush(prefix)

    def _flush(self, prefix: str) -> None:
        folded, last = self._open.pop(prefix)
        ending = f", ending in {last}," if last else ""
        self._write(
            f"{prefix}neffbench: (a Python traceback of {plural(folded, 'line')}{ending} is in the job's job.log)"
        )
