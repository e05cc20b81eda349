"""Folding the Python traceback frames of library and workbench code out of the log view.

A compiler error reaches the log as torch_neuronx's RuntimeError with a traceback through
neffbench, torch and torch_neuronx: read in the view it looks like the workbench crashed. Those
frames stay in job.log; the view shows one line saying they were folded, the frames of the user's
own code, and the exception line.
"""

from __future__ import annotations

from neffbench.usercode.tracebacks import TracebackLines
from neffbench.words import plural

FOLDED = object()  # feed's answer for a line the view leaves out


class TracebackFolder:
    def __init__(self) -> None:
        self._lines = TracebackLines()
        self._inside = False
        self.folded = 0

    def feed(self, line: str) -> object | str | None:
        """FOLDED to leave ``line`` out, a line of text to show before it, or None to show it as it is."""
        part = self._lines.read(line)
        if part.kind == "head":
            self._inside, self.folded = True, 0
            return FOLDED
        if not self._inside:
            return None
        if part.kind in ("frame", "source", "blank"):
            if part.user is False:  # a frame not the user's, and the lines under it
                self.folded += 1
                return FOLDED
            return None
        self._inside = False
        return (
            f"⋯ Python traceback: {plural(self.folded, 'line')} through neffbench and library code folded "
            "(job.log has them all)"
        )
