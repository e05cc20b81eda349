"""A value given on the command line (``--kwarg NAME=VALUE``, ``--constant NAME=VALUE``): TOML, or a bare word.

``4096``, ``1e-6``, ``true``, ``"x"``, ``[1, 2]`` and ``{entry = "...", kwargs = {...}}`` are TOML values. A bare
word that is no TOML (``gelu``, ``bert-base-uncased``, ``./weights.pt``) is taken as the string it spells, as a
shell user means it. Text holding TOML's own punctuation (braces, brackets, quotes, ``=``, a comma) is a table,
an array or a string that did not parse: taking it as a string would hand the module a config it never asked for,
so it is refused, with where TOML stopped reading it.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from neffbench.schema.problems import Problem, SpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# Characters no bare word needs and every broken table, array or quoted string has.
TOML_PUNCTUATION = frozenset("{}[]\"'=,")
_PREFIX = "v = "
_COLUMN_RE = re.compile(r"\(at line 1, column (\d+)\)")


def _where(reason: str) -> str:
    """TOML's position, counted in the value as typed (it read ``v = VALUE``)."""
    found = _COLUMN_RE.search(reason)
    if found is None:
        return reason.replace("(at end of document)", "(at the end of the value)")
    column = max(1, int(found[1]) - len(_PREFIX))
    return reason[: found.start()] + f"(at character {column} of the value)"


def parse_value(text: str, option: str, item: str) -> Any:
    """``text`` as TOML reads it, or the text itself when it is a bare word; SpecError when it is TOML that did
    not parse (or more than one value)."""
    try:
        table = tomllib.loads(_PREFIX + text)
    except tomllib.TOMLDecodeError as exc:
        if not TOML_PUNCTUATION.intersection(text):
            return text
        raise SpecError(
            [
                Problem(
                    option,
                    f"{option} {item!r}: the value is malformed TOML: {_where(str(exc))}. A table is "
                    "{key = value, ...} with its braces closed and no comma after the last pair, an array [a, b], a "
                    "string with these characters goes in quotes (NAME='\"text\"').",
                )
            ]
        ) from None
    if set(table) != {"v"}:
        raise SpecError([Problem(option, f"{option} {item!r}: the value is more than one TOML value.")])
    return table["v"]


def cli_values(items: list[str] | None, option: str) -> dict[str, Any]:
    """``NAME=VALUE`` items with their values read as TOML, or bare words (``parse_value``)."""
    out: dict[str, Any] = {}
    for item in items or []:
        ((key, text),) = pairs([item], option).items()
        out[key] = parse_value(text, option, item)
    return out


def pairs(items: list[str] | None, option: str, sep: str = "=") -> dict[str, str]:
    """``NAME=VALUE`` (or ``NAME:SPEC``, by ``sep``) items as a dict of their text, refusing one without ``sep``."""
    out: dict[str, str] = {}
    for item in items or []:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise SpecError([Problem(option, f"{option} {item!r} is not NAME{sep}VALUE.")])
        out[key.strip()] = value.strip()
    return out
