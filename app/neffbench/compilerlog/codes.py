"""What a neuronx-cc error code means and what to do about it, from the table in error_codes.toml.

The compiler prints terse codes (``NCC_EOOM001``, or on older releases ``[NLA001]``, ``[F134]``); the
Neuron docs explain the NCC_ ones page by page and the older ones only in release notes and GitHub
issues. The table gathers that help so the CLI and the log view can show it offline, and points at the
page to read next. Plain Python (no Qt, no third-party imports) so the core can use it anywhere.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import asdict, dataclass
from importlib.resources import files
from typing import Any
from urllib.parse import quote

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]

DOCS_SEARCH_URL = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/search.html?q="
_NCC = "NCC_"


@dataclass(frozen=True)
class CodeHelp:
    """Help for one code; ``known`` is False when the table has no entry and the rest is a fallback."""

    code: str
    title: str
    advice: str
    url: str
    known: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, str]]:
    # Read through importlib.resources so the table is found inside a wheel or zip as well as a checkout.
    text = (files("neffbench.compilerlog") / "error_codes.toml").read_text(encoding="utf-8")
    table: dict[str, dict[str, str]] = tomllib.loads(text)
    return table


def normalize(code: str) -> str:
    """The table's key for what a user pasted: ``[nla001]`` -> ``NLA001``, ``eoom001`` -> ``NCC_EOOM001``.

    Unknown codes come back upper-cased and without brackets, so messages show them the way the
    compiler prints them.
    """
    key = code.strip().strip("[]").strip().upper()
    table = _table()
    # The docs' page names (EOOM001.html) drop the prefix the compiler prints, so people paste both.
    if key not in table and not key.startswith(_NCC) and _NCC + key in table:
        return _NCC + key
    return key


def lookup(code: str) -> CodeHelp:
    """Help for ``code``; never raises, so callers can pass whatever a log line contained."""
    key = normalize(code)
    entry = _table().get(key)
    if entry is not None:
        return CodeHelp(key, entry["title"], entry["advice"], entry["url"], True)
    return CodeHelp(
        code=key,
        title=f"Unknown error code {key}",
        advice=(
            f"{key} is not in the error-code table shipped with this version of neffbench; "
            "search the Neuron documentation for it."
        ),
        # errors="replace": a stray lone surrogate in pasted text must not turn help into a crash.
        url=DOCS_SEARCH_URL + quote(key, safe="", errors="replace"),
        known=False,
    )


def all_codes() -> list[CodeHelp]:
    """Every entry, in the order of the table."""
    return [lookup(code) for code in _table()]


def describe(code: str, width: int = 100) -> str:
    """A few lines for a terminal: the code and title, the advice wrapped, the docs link."""
    help_ = lookup(code)
    advice = textwrap.fill(help_.advice, width=width, break_on_hyphens=False, break_long_words=False)
    return f"{help_.code}  {help_.title}\n{advice}\ndocs: {help_.url}"
