"""Counts in sentences (``1 line``, ``2 lines``), numbers as typed, sentences joined: one place, so no message says
"1 lines" or writes 999999999 as "1e+09"."""

from __future__ import annotations

# Nouns whose plural is not the singular with an ``s``.
_IRREGULAR = {"batch": "batches", "pass": "passes", "process": "processes", "match": "matches"}


def noun(n: int, singular: str, plural_form: str | None = None) -> str:
    """The noun that agrees with ``n``: ``line`` for 1, ``lines`` for 0 or 2."""
    return singular if n == 1 else (plural_form or _IRREGULAR.get(singular) or singular + "s")


def plural(n: int, singular: str, plural_form: str | None = None, *, grouped: bool = False) -> str:
    """``n`` and the noun that agrees with it (``1 line``, ``3 lines``); ``grouped``: ``12,000 lines``."""
    count = f"{n:,}" if grouped else str(n)
    return f"{count} {noun(n, singular, plural_form)}"


def sentences(*parts: str) -> str:
    """Sentences joined by a space, each begun with a capital and ended with a full stop (empty parts dropped)."""
    out = []
    for part in parts:
        text = part.strip()
        if text:
            text = text[0].upper() + text[1:]
            out.append(text if text.endswith((".", "!", "?")) else text + ".")
    return " ".join(out)


MESSAGE_CHARS = 2000  # a message kept whole stops here: a sentence, not a dump


def message_text(text: str) -> str:
    """An exception's message on one line: its first line, or, when that line ends in a colon (what follows is the
    explanation, as in a library's ``Validation error for field 'hidden_size':`` and the error under it), every
    line, joined."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    if len(lines) == 1 or not lines[0].endswith(":"):
        return lines[0]
    whole = " ".join(lines)
    return whole if len(whole) <= MESSAGE_CHARS else whole[: MESSAGE_CHARS - 1] + "…"


def number(value: int | float) -> str:
    """A number as a person writes it, exactly: whole numbers whole (``999999999``, not ``1e+09``; ``64`` for 64.0),
    others in the fewest digits that give back the same float (``1.234567``, ``1e-06``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value) if isinstance(value, int) else repr(value)
