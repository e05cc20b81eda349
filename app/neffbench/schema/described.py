"""A description's claims of compiler arguments (the seed's ``--lnc=2``) kept only while the spec's arguments make them.

A preset's description travels with the spec into every job made from it; once the form or a sweep changes the
compiler's arguments, a claim the job no longer makes would be read as what the NEFF was compiled with. The
description is no part of the spec's hash, so dropping a claim never renames a job.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from neffbench.schema.compiler import compiler_args, parse_extra_args

# ``--lnc=2``, ``--lnc 2``, ``--enable-fast-loading-neuron-binaries``, ``-O3``, with what leads into it in a list.
_CLAIM = re.compile(r"(?:,\s*|\s+)?(?<![\w-])(-O[0-9]|--[a-z][a-z0-9-]*)(?:=(\w(?:[\w.+-]*\w)?)|\s+(\d+)\b)?")
_ALIASES = {"--logical-nc-config": "--lnc", "-O": "--optlevel"}


def _option(opt: str) -> str:
    return _ALIASES.get(opt, opt)


def _claim(match: re.Match) -> tuple[str, str | None]:
    opt, value = match.group(1), match.group(2) or match.group(3)
    if re.fullmatch(r"-O[0-9]", opt):
        return "--optlevel", opt[2:]
    return _option(opt), value


def held_claims(spec: Any) -> str:
    """``spec``'s description without the compiler arguments it names that ``compiler_args(spec)`` does not give."""
    text = getattr(spec, "description", "") or ""
    if "-" not in text:
        return text
    given: dict[str, str | None] = {}
    for opt, value in parse_extra_args(compiler_args(spec)):
        given[_option(opt)] = value  # the right-most wins, as in neuronx-cc

    def keep(match: re.Match) -> str:
        opt, value = _claim(match)
        holds = opt in given and (value is None or given[opt] == value)
        return match.group(0) if holds else ""

    kept = _CLAIM.sub(keep, text)
    if kept == text:
        return text
    # What the dropped claim leaves behind: "build:, next" and "token ." read "build: next" and "token.".
    kept = re.sub(r"([:;,])\s*,", r"\1", kept)
    return re.sub(r"\s+([.,;:])", r"\1", kept).strip()


def with_held_claims(spec: Any) -> Any:
    """``spec`` with :func:`held_claims` as its description (the same spec when nothing was dropped)."""
    text = held_claims(spec)
    return spec if text == getattr(spec, "description", "") else dataclasses.replace(spec, description=text)
