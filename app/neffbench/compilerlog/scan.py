"""Skipping what cannot matter, at the speed of a regular expression over the whole file.

A debug-verbosity compile writes millions of DEBUG and INFO records of scheduling detail. Such a
record says nothing the reader keeps unless its message starts a pass, a pipeline, a version, a
command or a code, or it ends a pass or names a code further on. ``is_boring`` says that of one
line; ``interesting`` finds every other line of a whole file in one pass of the regex engine (and
one ``find`` per extra key), so the Python-level reader sees a few thousand lines, not millions.
The reader applies ``is_boring`` to every line it is fed, so reading a file whole or only its
interesting lines gives the same result (a property test checks it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from neffbench.compilerlog.lines import BRACKET_CODE_PATTERN

# An ISO record at DEBUG or INFO with pid and logger, whose message starts with none of the first
# letters of what the reader looks for at a message's start (Running, Pipeline, Neuron..., Command
# line, Subcommand returned, neuronx-cc or its path, a [CODE]) and is not indented (a traceback's source line).
_BORING_HEAD = (
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?Z (?:DEBUG|INFO) \d+ (?:\d+ )?\[[^\]\n]*\]: "
    r"[^RPNSCn/\[\s]"
)
# Found anywhere in a message: a pass's end (both forms), a code, the compiler's name (its command line, its exit).
EXTRA_KEYS = ("finished after", "Finished pass", "NCC_", "-cc")

_BORING = re.compile(_BORING_HEAD)
_CODE = re.compile(BRACKET_CODE_PATTERN)
_INTERESTING_START = re.compile(rb"\n(?!" + _BORING_HEAD.encode() + rb")")
_CODE_BYTES = re.compile(BRACKET_CODE_PATTERN.encode())


def is_boring(line: str) -> bool:
    # EXTRA_KEYS spelled out: this runs on every line.
    return (
        _BORING.match(line) is not None
        and "finished after" not in line
        and "Finished pass" not in line
        and "NCC_" not in line
        and "-cc" not in line
        and _CODE.search(line) is None
    )


def _line_starts(data: bytes) -> list[int]:
    starts = [m.start() + 1 for m in _INTERESTING_START.finditer(data)]
    for key in EXTRA_KEYS:
        key_b = key.encode()
        at = data.find(key_b)
        while at != -1:
            starts.append(data.rfind(b"\n", 0, at) + 1)
            at = data.find(key_b, at + 1)
    starts += [data.rfind(b"\n", 0, m.start()) + 1 for m in _CODE_BYTES.finditer(data)]
    starts.append(0)
    return sorted(set(s for s in starts if s < len(data)))


def interesting(data: bytes) -> Iterator[tuple[int, int, str]]:
    """(line number, byte offset, text) of every line of ``data`` that is not boring, in order.

    Boring lines are left out (the reader would skip them); bad UTF-8 becomes U+FFFD.
    """
    number, at = 1, 0
    for start in _line_starts(data):
        number += data.count(b"\n", at, start)
        at = start
        end = data.find(b"\n", start)
        text = data[start : end if end != -1 else len(data)].decode("utf-8", errors="replace").rstrip("\r")
        if not is_boring(text):
            yield number, start, text
