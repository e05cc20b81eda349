"""A Python traceback read line by line: which part of it each line is, and which of its frames are the user's own
code. The terminal, the window's log view and the probe's reports all read tracebacks with this.

A frame is the user's unless its file is an installed package's, the standard library's or the workbench's: judged
by where the file lies on this host (``origin.is_user_file``) and, for a log written elsewhere (a sweep's node, a
job copied here, another install of the workbench), by the folders such files lie in on any host.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

from neffbench.usercode.origin import is_user_file

HEAD = "Traceback (most recent call last):"
CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
_FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]*)", line \d+')
# ``KernelError: ...`` or ``torch.OutOfMemoryError`` alone: exception class names are CamelCase.
_EXCEPTION_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Z]\w*)(?::\s.*)?$")
# The folders installed packages and the standard library lie in, on any host.
_LIBRARY_RE = re.compile(r"[/\\](?:site-packages|dist-packages|lib[/\\]python\d[\d.]*)[/\\]")


def _workbench_file(path: str) -> bool:
    """Whether ``path`` is a file of the workbench's own package, installed here or elsewhere (any version): one in a
    folder named neffbench, under a subpackage or module this install has too (a user's folder of that name is not)."""
    parts = re.split(r"[/\\]", path)
    own = Path(__file__).resolve().parent.parent
    return any(part == "neffbench" and (own / parts[i + 1]).exists() for i, part in enumerate(parts[:-1]))


@functools.lru_cache(maxsize=4096)
def is_user_frame(path: str) -> bool:
    """Whether a traceback's frame in ``path`` is the user's own code. Python's pseudo-files (``<frozen ...>``,
    ``<string>``) are shown as they are: code run from a string may be the user's."""
    if path.startswith("<"):
        return True
    return not _LIBRARY_RE.search(path) and not _workbench_file(path) and is_user_file(path)


class Part(NamedTuple):
    """What a line is to a traceback: ``head``, ``frame``, ``source`` (an indented line under a frame), ``blank``,
    ``chain`` (the sentence between chained exceptions), ``exception`` (its line) or ``text`` (none of these)."""

    kind: str
    user: bool | None = None  # a frame in the user's code, or the frame a source or blank line is under (None: none)
    exception: str | None = None  # the exception's class name


class TracebackLines:
    """Says of each line, in order, which part of a traceback it is (a source line belongs to the frame above)."""

    def __init__(self) -> None:
        self._frame: bool | None = None

    def read(self, line: str) -> Part:
        if line.startswith(HEAD):
            self._frame = None
            return Part("head")
        match = _FRAME_RE.match(line)
        if match:
            self._frame = is_user_frame(match["path"])
            return Part("frame", self._frame)
        if not line.strip():
            return Part("blank", self._frame)
        if line.startswith((" ", "\t")):
            return Part("source", self._frame)
        self._frame = None
        if line.startswith(CHAIN):
            return Part("chain")
        exception = _EXCEPTION_RE.match(line)
        if exception:
            return Part("exception", exception=exception[1])
        return Part("text")


def _decoration(line: str) -> bool:
    """Python's markers under a source line (``^^^^``, ``~~~``): decoration, not content."""
    stripped = line.strip()
    return bool(stripped) and set(stripped) <= {"^", "~"}


def user_frames(traceback_text: str) -> str:
    """A formatted traceback cut down to the frames in the user's own files (each with its source line) and the
    exception line: what a terminal shows, the whole text staying in job.log or the probe's report."""
    reader = TracebackLines()
    kept: list[str] = []
    for line in traceback_text.rstrip("\n").splitlines():
        part = reader.read(line)
        if part.kind in ("frame", "source") and part.user or part.kind in ("exception", "text"):
            kept.append(line)
    return "\n".join(kept)


def without_foreign_frames(lines: list[str]) -> list[str]:
    """Log lines with the traceback frames of the workbench's and libraries' code left out (the user's frames and
    everything that is not a traceback stay): what a terminal shows of a log's context."""
    reader = TracebackLines()
    out: list[str] = []
    for line in lines:
        part = reader.read(line)
        if part.kind in ("head", "chain") or _decoration(line):
            continue
        if part.kind in ("frame", "source") and part.user is False:
            continue
        out.append(line)
    return out
