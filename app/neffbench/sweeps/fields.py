"""Spec fields by dotted name (``compiler.optlevel``, ``buckets.seq``, ``module.kwargs.NAME``): what a sweep may vary."""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass
from typing import Any

from neffbench.schema import fields_of, sections_of, tables_of, top_fields_of

# Fields one sweep cannot vary, with the reason a user reads.
FIXED = {
    "kernel": "the kernel cannot be swept: a sweep varies the fields of one kernel's spec (run one sweep per kernel)",
    "workdir": "the workdir cannot be swept: a sweep writes all its points into one workdir (set it with --workdir)",
}


@dataclass(frozen=True)
class SweepField:
    """A field a sweep can vary: its dotted name, its type, and what the form and the CLI say about it."""

    name: str
    type: Any
    label: str
    help: str
    choices: tuple[str, ...] | None = None
    current: Any = None


def _is_dict(tp: Any) -> bool:
    inner = unoptional(tp)
    return typing.get_origin(inner) is dict or inner is Any


def unoptional(tp: Any) -> Any:
    """``X | None`` as ``X``; any other type as it is."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def _value_type(tp: Any) -> Any:
    """The type of a dict's values (``Any`` for anything else)."""
    inner = unoptional(tp)
    args = typing.get_args(inner)
    return args[1] if typing.get_origin(inner) is dict and len(args) == 2 else Any


def _leaves(prefix: str, value: Any) -> list[tuple[str, Any]]:
    """Dotted paths of the scalar and list values of a nested table (a config's kwargs, say)."""
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(f"{prefix}.{key}", item)]
    return [(prefix, value)]


def display_labels(fields: list[SweepField]) -> dict[str, str]:
    """Each field by its label, with its table or section where two share one (``hidden_size (module.kwargs)``):
    the sweep dialog's words for its rows, and the window's for the points it shows."""
    counts: dict[str, int] = {}
    for f in fields:
        counts[f.label] = counts.get(f.label, 0) + 1
    return {f.name: f.label if counts[f.label] == 1 else f"{f.label} ({f.name.rpartition('.')[0]})" for f in fields}


def sweepable(spec: Any) -> list[SweepField]:
    """Every field of ``spec`` a sweep can vary, in the spec's own order (tables by the keys they hold)."""
    out: list[SweepField] = []
    hints = typing.get_type_hints(type(spec))
    for f in top_fields_of(spec):
        if f.name not in FIXED:
            out.append(
                SweepField(
                    f.name,
                    hints[f.name],
                    f.metadata.get("label", f.name),
                    f.metadata.get("help", ""),
                    f.metadata.get("choices"),
                    getattr(spec, f.name),
                )
            )
    for section in sections_of(spec):
        sect = getattr(spec, section)
        sect_hints = typing.get_type_hints(type(sect))
        for f in fields_of(spec, section):
            name, value, meta = f"{section}.{f.name}", getattr(sect, f.name), f.metadata
            if _is_dict(sect_hints[f.name]):
                for path, leaf in _leaves(name, value or {}):
                    out.append(SweepField(path, Any, path.rsplit(".", 1)[-1], meta.get("help", ""), None, leaf))
            else:
                out.append(
                    SweepField(
                        name,
                        sect_hints[f.name],
                        meta.get("label", f.name),
                        meta.get("help", ""),
                        meta.get("choices"),
                        value,
                    )
                )
    fields = {f.name: f for f in dataclasses.fields(spec)}
    for table, tp in tables_of(spec).items():
        meta = fields[table].metadata
        for key, value in (getattr(spec, table) or {}).items():
            out.append(SweepField(f"{table}.{key}", _value_type(tp), key, meta.get("help", ""), None, value))
    return out


def resolve(spec: Any, name: str) -> tuple[Any, str | None]:
    """The type a value of field ``name`` must have, or None and the sentence saying why it is no field."""
    parts = name.split(".")
    if not name or any(not p.strip() for p in parts):
        return None, f"'{name}' is not a field name: give a dotted name such as compiler.optlevel"
    head = parts[0]
    if head in FIXED:
        return None, FIXED[head]
    cls = type(spec)
    hints = typing.get_type_hints(cls)
    sections, tables = sections_of(spec), tables_of(spec)
    top = {f.name for f in top_fields_of(spec)}
    if head in top:
        if len(parts) > 1:
            return None, f"'{head}' is a top-level field, not a table: sweep it as '{head}'"
        return hints[head], None
    if head in sections:
        names = [f.name for f in fields_of(spec, head)]
        if len(parts) == 1:
            return None, f"'{head}' is a section: name one of its fields ({', '.join(f'{head}.{n}' for n in names)})"
        field_name = parts[1].replace("-", "_")
        if field_name not in names:
            return None, f"[{head}] has no field '{parts[1]}'.{_did_you_mean(f'{head}.{field_name}', spec)}"
        tp = typing.get_type_hints(sections[head])[field_name]
        if len(parts) > 2:
            if not _is_dict(tp):
                return None, f"'{head}.{field_name}' is not a table: sweep it as '{head}.{field_name}'"
            return Any, None
        return tp, None
    if head in tables:
        if len(parts) == 1:
            return None, f"'{head}' is a table: name one of its keys ({head}.KEY)"
        value_tp = _value_type(tables[head])
        if len(parts) > 2 and not _is_dict(value_tp):
            return None, f"the values of [{head}] are not tables: sweep '{head}.{parts[1]}'"
        return (value_tp if len(parts) == 2 else Any), None
    return None, f"the {getattr(cls, 'kernel', '?')} spec has no field '{name}'.{_did_you_mean(name, spec)}"


def normalised(spec: Any, name: str) -> str:
    """``compiler.opt-level`` as ``compiler.opt_level``: dashes in section field names read as the CLI writes them."""
    parts = name.split(".")
    if len(parts) >= 2 and parts[0] in sections_of(spec):
        parts[1] = parts[1].replace("-", "_")
    elif len(parts) == 1:
        parts[0] = parts[0].replace("-", "_")
    return ".".join(parts)


def _did_you_mean(name: str, spec: Any) -> str:
    known = [f.name for f in sweepable(spec)]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def assign(data: dict[str, Any], name: str, value: Any) -> None:
    """Set field ``name`` in a spec's plain dict (``to_dict``), making the tables on the way."""
    *path, leaf = name.split(".")
    node = data
    for part in path:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value
