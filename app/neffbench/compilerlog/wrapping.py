"""Undoing the hard wrap of a pasted log.

Logs pasted into an issue, a mail or a ticket often come back broken at 80 or 100 columns: every
long record continues on the next line, which no longer looks like a record. The width shows in the
file itself, as its longest line (a real log always has a longer one: a command line, a path). A
line that does not start a record, is not indented, and whose first word would not have fitted on
the line above (greedy wrapping) is the rest of that line.
"""

from __future__ import annotations

import re

from neffbench.compilerlog.lines import parse_line

WIDTHS = (80, 100)
_NOT_A_PIECE_RE = re.compile(r"^(?:\s|\.+$|Compiler status |Traceback |File \")")


def wrap_width(lines: list[str]) -> int | None:
    """The width the lines were wrapped at, or None when they were not."""
    if not lines:
        return None
    longest = max(map(len, lines))
    # A wrapped file fills its lines nearly to the width; a short log that merely fits does not.
    return next((w for w in WIDTHS if w - 12 <= longest <= w), None)


def _is_piece(line: str, above: str, width: int) -> bool:
    if not line or _NOT_A_PIECE_RE.match(line):
        return False
    first_word = line.split(" ", 1)[0]
    return len(above) + 1 + len(first_word) > width and not parse_line(line).is_record


def logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(first physical line number, text) for each line, with hard-wrapped pieces joined back."""
    width = wrap_width(lines)
    if width is None:
        return list(enumerate(lines, 1))
    out: list[tuple[int, str]] = []
    above = ""
    for number, line in enumerate(lines, 1):
        if out and above and _is_piece(line, above, width):
            start, text = out[-1]
            out[-1] = (start, text + " " + line)
        else:
            out.append((number, line))
        above = line
    return out
