"""Undoing the hard wrap of a pasted log.

Logs pasted into an issue, a mail or a ticket often come back broken at 80 or 100 columns: every
long record continues on the next line, which no longer looks like a record. The width shows in the
file itself, as its longest line (a real log always has a longer one: a command line, a path). Two
kinds of wrap are met:

- by words (a mail client, an editor): a line that does not start a record, is not indented, and whose
  first word would not have fitted on the line above (greedy wrapping) is the rest of that line, and
  the space the wrap took is put back. A word longer than the width stays whole on a line of its own,
  so a lone path or URL longer than the width does not say the file was not wrapped;
- by characters (a terminal's width, ``fold``): every broken line is exactly the width, cut anywhere,
  inside a word or a code (``NCC_`` | ``EOOM001``) or before a space; the rest is joined back as it is.
  Such a file has more lines of exactly the width than lines just short of it, a word-wrapped one fewer.
"""

from __future__ import annotations

import re

from neffbench.compilerlog.lines import parse_line

WIDTHS = (80, 100)
SLACK = 12  # a word-wrapped file fills its lines to within this of the width; a short log that merely fits does not
_NOT_A_PIECE_RE = re.compile(r"^(?:\s|\.+$|Compiler status |Traceback |File \")")
_NOT_A_CUT_RE = re.compile(r"^(?:Compiler status |Traceback |\s*File \")")


def _unbreakable(line: str) -> bool:
    """A lone path or URL: a word wrapper leaves it whole, however long."""
    token = line.strip()
    return "/" in token and " " not in token


def wrap_width(lines: list[str]) -> int | None:
    """The width the lines were wrapped at, or None when they were not."""
    if not lines:
        return None
    longest = max(map(len, lines))
    for width in WIDTHS:
        # Only a line longer than the width that a wrapper would have broken rules the width out (its
        # first long line with a space comes early in a log that was not wrapped: all() stops there).
        if longest > width and not all(len(line) <= width or _unbreakable(line) for line in lines):
            continue
        fitting = longest if longest <= width else max((n for n in map(len, lines) if n <= width), default=0)
        return width if width - SLACK <= fitting else None
    return None


def by_characters(lines: list[str], width: int) -> bool:
    """True when the lines were cut at exactly ``width`` characters rather than between words."""
    exact = sum(1 for line in lines if len(line) == width)
    near = sum(1 for line in lines if width - SLACK <= len(line) < width)
    return exact >= 2 and exact > near


def _is_piece(line: str, above: str, width: int) -> bool:
    if not line or _NOT_A_PIECE_RE.match(line):
        return False
    first_word = line.split(" ", 1)[0]
    return len(above) + 1 + len(first_word) > width and not parse_line(line).is_record


def _is_cut(line: str, above: str, width: int) -> bool:
    return bool(line) and len(above) == width and not _NOT_A_CUT_RE.match(line) and not parse_line(line).is_record


def logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(first physical line number, text) for each line, with hard-wrapped pieces joined back."""
    width = wrap_width(lines)
    if width is None:
        return list(enumerate(lines, 1))
    cut = by_characters(lines, width)
    out: list[tuple[int, str]] = []
    above = ""
    for number, line in enumerate(lines, 1):
        if out and above and (_is_cut(line, above, width) if cut else _is_piece(line, above, width)):
            start, text = out[-1]
            out[-1] = (start, text + line if cut else text + " " + line)
        else:
            out.append((number, line))
        above = line
    return out
