"""Folding the Python traceback frames of library and workbench code out of the log view.

A compiler error reaches the log as torch_neuronx's RuntimeError with a traceback through
neffbench, torch and torch_neuronx: read in the view it looks like the workbench crashed. Those
frames stay in job.log; the view shows one line saying they were folded, the frames of the user's
own code, and the exception line.
"""

from __future__ import annotations

import re

from neffbench.words import plural

FOLDED = object()  # feed's answer for a line the view leaves out
_HEAD = "Traceback (most recent call last)"
_FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]*)", line \d+')
# Frames in these are not the user's: the workbench, installed packages, the standard library.
_LIBRARY_RE = re.compile(r"[/\\](?:neffbench|site-packages|dist-packages|lib[/\\]python\d[\d.]*)[/\\]")


class TracebackFolder:
    def __init__(self) -> None:
        self._inside = False
        self._folding_source = False  # the source lines under a folded frame go with it
        self.folded = 0

    def feed(self, line: str):
        """FOLDED to leave ``line`` out, a line of text to show before it, or None to show it as it is."""
        if line.startswith(_HEAD):
            self._inside, self.folded = True, 0
            return FOLDED
        if not self._inside:
            return None
        m = _FRAME_RE.match(line)
        if m:
            self._folding_source = bool(_LIBRARY_RE.search(m.group("path")))
            if self._folding_source:
                self.folded += 1
                return FOLDED
            return None
        if line[:1].isspace() or not line.strip():
            if self._folding_source:
                self.folded += 1
                return FOLDED
            return None
        self._inside = False
        return (
            f"⋯ Python traceback: {plural(self.folded, 'line')} through neffbench and library code folded "
            "(job.log has them all)"
        )
