"""Spec TOML that says which of its values are ignored: a file never carries one without a word.

An ignored (or inactive) field that holds a value other than its default is written as a comment,
``# partial_rotary_factor = 0.5  # ignored: rotary_dim is set, and it wins over the factor``: the
reader sees the value and can bring it back by removing the ``#`` once the reason is gone, and the
spec the file loads as uses the default, which nothing reads anyway. Only a value whose removal
leaves the spec hash unchanged is commented out; one the hash still counts (``lnc`` on trn1 is passed
to neuronx-cc) stays a value, with "does not apply" and the reason on the line above, so that saving
and loading a spec never renames its job directories; so does one validation blames (a partial rotary
factor that disagrees with rotary_dim), so that saving never makes a problem disappear.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import tomli_w

from neffbench.schema import sections_of, top_fields_of
from neffbench.spec.hashing import spec_hash
from neffbench.spec.ignored import all_ignored


@dataclass(frozen=True)
class Mark:
    key: str  # "section.name", or "name" for a top field
    value: Any
    reason: str
    dropped: bool  # written as a comment (True) or kept as a value with a note above it
    kept_because: str = ""  # why a value that does not apply is still written


def _field(spec: Any, key: str) -> tuple[Any, dataclasses.Field]:
    section, _, name = key.rpartition(".")
    owner = getattr(spec, section) if section else spec
    return owner, next(f for f in dataclasses.fields(owner) if f.name == name)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    raise TypeError(f"{f.name} has no default")


def _reset(spec: Any, keys: list[str]) -> Any:
    for key in keys:
        section, _, name = key.rpartition(".")
        owner, f = _field(spec, key)
        changed = dataclasses.replace(owner, **{name: _default(f)})
        spec = dataclasses.replace(spec, **{section: changed}) if section else changed
    return spec


def marks(spec: Any) -> list[Mark]:
    """The ignored fields of ``spec`` that hold a value of their own, in field order."""
    ignored = all_ignored(spec)
    if not ignored:
        return []
    order = [f.name for f in top_fields_of(spec)]
    order += [f"{s}.{f.name}" for s in sections_of(spec) for f in dataclasses.fields(getattr(spec, s))]
    own: dict[str, Any] = {}
    for key in sorted(ignored, key=lambda k: order.index(k) if k in order else len(order)):
        owner, f = _field(spec, key)
        value = getattr(owner, f.name)
        if value is not None and value != _default(f):
            own[key] = value
    if not own:
        return []
    from neffbench.spec.validate import validate

    # A value validation blames stays, so that saving never turns a spec with a problem into one without.
    blamed = {p.field for p in validate(spec)}
    wanted = spec_hash(spec)
    counted = {k for k in own if spec_hash(_reset(spec, [k])) != wanted}
    droppable = [k for k in own if k not in blamed and k not in counted]
    if droppable and spec_hash(_reset(spec, droppable)) != wanted:
        counted |= set(droppable)  # each alone leaves the hash, together they do not: keep them all
        droppable = []
    return [
        Mark(
            k,
            value,
            ignored[k],
            k in droppable,
            "the spec hash counts it" if k in counted else "validation reports it" if k in blamed else "",
        )
        for k, value in own.items()
    ]


def _block(lines: list[str], section: str) -> tuple[int, int]:
    """[start, end) of the lines holding the section's own keys (before any of its sub-tables)."""
    if section and f"[{section}]" not in lines:
        lines += ["", f"[{section}]"]  # a section of sub-tables only: give its own keys a header
    start = lines.index(f"[{section}]") + 1 if section else 0
    end = start
    while end < len(lines) and not lines[end].startswith("["):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _key_line(lines: list[str], start: int, end: int, name: str) -> int | None:
    return next((i for i in range(start, end) if lines[i].startswith(f"{name} = ")), None)


def annotate(text: str, spec: Any, found: list[Mark]) -> str:
    """Put the marks into ``text``, the TOML of ``spec`` written without the dropped values."""
    lines = text.split("\n")
    order = {s: [f.name for f in dataclasses.fields(getattr(spec, s))] for s in sections_of(spec)}
    order[""] = [f.name for f in top_fields_of(spec)]
    for mark in found:
        section, _, name = mark.key.rpartition(".")
        start, end = _block(lines, section)
        if not mark.dropped:
            at = _key_line(lines, start, end, name)
            if at is not None:
                lines.insert(at, f"# {name} does not apply: {mark.reason} (kept: {mark.kept_because})")
            continue
        body = tomli_w.dumps({name: mark.value}).rstrip("\n").split("\n")
        if len(body) == 1:
            comment = [f"# {body[0]}  # ignored: {mark.reason}"]
        else:
            comment = [f"# ignored: {mark.reason}", *(f"# {line}" for line in body)]
        # Where the value would have been: before the next field that is written, else at the end.
        later = order[section][order[section].index(name) + 1 :]
        at = next((i for i in (_key_line(lines, start, end, n) for n in later) if i is not None), end)
        lines[at:at] = comment
    return "\n".join(lines)
