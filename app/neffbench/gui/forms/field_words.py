"""The window's words for a spec's keys: each field by its form label, each section by its title.

Validation speaks of spec files (``rope.max_pos``, ``under [inputs]``), which is what the command line shows; the
window shows the form, so whatever of a problem reaches it is put in the form's words here, in one place.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from neffbench.kernels import registry
from neffbench.spec import Problem, fields_of, sections_of, tables_of, top_fields_of

# Titles of the sections every kernel has; a kernel titles its own (``Kernel.section_titles``).
SECTION_TITLES = {"": "Job", "inputs": "Example inputs", "compiler": "Compiler"}

_BRACKETED = re.compile(r"(\bunder )?\[([a-z_][\w.]*)\]")
_DOTTED = re.compile(r"(?<![\w./])([a-z_]\w*(?:\.\w+)+)(?![\w/]|\.\w)")


def labels(spec: Any) -> dict[str, str]:
    """Every key the window may name, with its words: ``rope.max_pos`` → ``Max positions``, ``rope`` → ``RoPE
    table``, ``inputs`` → ``Example inputs`` (the module kernel's own: ``Inputs``)."""
    try:
        kernel_titles = registry.for_spec(spec).section_titles
    except KeyError:
        kernel_titles = {}
    titles = {**SECTION_TITLES, **kernel_titles}
    out: dict[str, str] = {}
    for f in top_fields_of(spec):
        if dataclasses.is_dataclass(getattr(spec, f.name, None)):
            continue
        out[f.name] = f.metadata.get("label", f.name)
    for section in sections_of(spec):
        out[section] = titles.get(section, section.replace("_", " ").capitalize())
        for f in fields_of(spec, section):
            out[f"{section}.{f.name}"] = f.metadata.get("label", f.name)
    for table in tables_of(spec):
        out[table] = titles.get(table, table.replace("_", " ").capitalize())
    # A kernel may title a field its form shows as a group of its own (the module's constructor arguments).
    out.update({key: title for key, title in kernel_titles.items() if key})
    return out


def key_words(key: str, words: dict[str, str]) -> str:
    """A key in the form's words: its label, else its table's title and the entry (``Inputs x``), else the key."""
    if key in words:
        return words[key]
    head, _, tail = key.rpartition(".")
    while head and head not in words:
        head, _, more = head.rpartition(".")
        tail = f"{more}.{tail}"
    return f"{words[head]} {tail}" if head else key


def in_words(text: str, words: dict[str, str]) -> str:
    """``text`` with the spec's keys it quotes in the form's words: ``under [inputs]`` → ``in Inputs``,
    ``a [buckets] axis`` → ``a Buckets axis``, ``rope.max_pos`` → ``Max positions``."""

    def bracketed(match: re.Match) -> str:
        key = match.group(2)
        if key not in words:
            return match.group(0)
        return ("in " if match.group(1) else "") + words[key]

    def dotted(match: re.Match) -> str:
        key = match.group(1)
        return words[key] if key in words else match.group(0)

    return _DOTTED.sub(dotted, _BRACKETED.sub(bracketed, text))


def worded(problem: Problem, words: dict[str, str]) -> Problem:
    """``problem`` with its message in the form's words (its field stays the key the form files it under)."""
    message = in_words(problem.message, words)
    return problem if message == problem.message else dataclasses.replace(problem, message=message)


def problem_text(problem: Problem, words: dict[str, str]) -> str:
    """One line for a problem shown away from its field (the form's banner, a tooltip): ``Max positions: ...``."""
    message = in_words(problem.message, words)
    return f"{key_words(problem.field, words)}: {message}" if problem.field else message
