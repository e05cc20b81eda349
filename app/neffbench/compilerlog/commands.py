"""The neuronx-cc command line: read from ``command.txt`` or a log, and compared with what was asked for."""

from __future__ import annotations

import re
import shlex

_COMMAND_RE = re.compile(
    r"(?:command line|compiler command|call compiler with cmd|running command)\s*:?\s*['\"]?(?P<cmd>\S*neuronx-cc\s+compile\b[^'\"]*)",
    re.IGNORECASE,
)


def command_from_text(text: str) -> list[str] | None:
    """The neuronx-cc argv in ``command.txt`` (or a log message naming it)."""
    text = text.strip()
    if not text:
        return None
    m = _COMMAND_RE.search(text)
    cmd = m.group("cmd") if m else text
    try:
        argv = shlex.split(cmd)
    except ValueError:
        argv = cmd.split()
    return argv or None


def _option_pairs(argv: list[str]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--") and "=" in tok:
            out.append(tuple(tok.split("=", 1)))  # type: ignore[arg-type]
        elif tok.startswith("-") and not re.fullmatch(r"-O\d", tok):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is not None and not nxt.startswith("-"):
                out.append((tok, nxt))
                i += 1
            else:
                out.append((tok, None))
        elif tok.startswith("-"):
            out.append((tok, None))
        i += 1
    return out


def effective_options(argv: list[str]) -> dict[str, str | None]:
    """Each option's value as neuronx-cc reads it: the right-most of competing options wins."""
    effective: dict[str, str | None] = {}
    for opt, value in _option_pairs(argv):
        effective[opt] = value
    return effective


def dropped_options(requested: list[str] | None, actual: list[str] | None) -> list[str]:
    """Options asked for that the command actually run lacks, or gives a different (right-most) value."""
    if not requested or not actual:
        return []
    effective = effective_options(actual)
    dropped = []
    for opt, value in _option_pairs(requested):
        if opt not in effective:
            dropped.append(opt if value is None else f"{opt} {value}")
        elif value is not None and effective[opt] != value:
            dropped.append(f"{opt} {value} (ran with {effective[opt]})")
    return dropped


# Spellings of one option: the right-most of them wins as of one name.
_ALIASES = {"--logical-nc-config": "--lnc", "--optlevel": "-O"}


def _normalised(argv: list[str]) -> list[tuple[str, str | None, str]]:
    """(option, value, as written) with ``-O2`` read as ``-O`` 2 and aliases as one name."""
    out = []
    for opt, value in _option_pairs(argv):
        written = opt if value is None else f"{opt} {value}"
        if re.fullmatch(r"-O\d", opt):
            opt, value = "-O", opt[2:]
        out.append((_ALIASES.get(opt, opt), value, written))
    return out


def competing_options(argv: list[str] | None) -> list[str]:
    """A sentence for each option the command gives more than once with different values (``--target trn1`` and
    ``--target inf2``): neuronx-cc uses the right-most, and the sentence says which that is."""
    given: dict[str, list[tuple[str | None, str]]] = {}
    for opt, value, written in _normalised(argv or []):
        given.setdefault(opt, []).append((value, written))
    out = []
    for values in given.values():
        if len({value for value, _ in values}) < 2:
            continue
        spelled = list(dict.fromkeys(written for _, written in values))
        out.append(f"the command gives {' and '.join(spelled)}: neuronx-cc uses the right-most, {values[-1][1]}")
    return out
