"""Spec files: TOML for people, JSON for machines, plain dicts in between, and the content hash."""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import tomli_w

from neffbench.spec.problems import Problem, SpecError
from neffbench.spec.schema import SECTIONS, CompileSpec, is_active, section_fields, top_fields

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def to_dict(spec: CompileSpec) -> dict[str, Any]:
    """Plain nested dict with every set value; ``None`` fields are left out (TOML has no null)."""
    out: dict[str, Any] = {}
    for f in top_fields():
        out[f.name] = getattr(spec, f.name)
    for section in SECTIONS:
        sect = getattr(spec, section)
        body: dict[str, Any] = {}
        for f in section_fields(section):
            value = getattr(sect, f.name)
            if value is None:
                continue
            body[f.name] = list(value) if isinstance(value, tuple) else value
        out[section] = body
    return out


def _did_you_mean(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def _type_name(tp: Any) -> str:
    return {int: "a whole number", float: "a number", bool: "true or false", str: "text"}.get(tp, str(tp))


def _coerce(where: str, tp: Any, value: Any) -> tuple[Any, Problem | None]:
    """Convert a value read from a file to the field's type, or say what is wrong with it."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None, None
        inner = next(a for a in args if a is not type(None))
        return _coerce(where, inner, value)
    if origin is tuple:
        inner = args[0]
        items = value if isinstance(value, (list, tuple)) else [value]
        out = []
        for item in items:
            got, problem = _coerce(where, inner, item)
            if problem:
                return None, problem
            out.append(got)
        return tuple(out), None
    if tp is bool:
        if isinstance(value, bool):
            return value, None
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value, None
        if isinstance(value, float) and value.is_integer():
            return int(value), None
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), None
    elif tp is str:
        if isinstance(value, str):
            return value, None
    return None, Problem(where, f"must be {_type_name(tp)}, got {value!r}.")


def from_dict(data: dict[str, Any]) -> CompileSpec:
    """Build a spec from a nested dict; every unknown key and badly typed value is reported at once."""
    if not isinstance(data, dict):
        raise SpecError([Problem("", "A spec must be a table of sections (model, rope, inputs, compiler).")])
    problems: list[Problem] = []
    hints = typing.get_type_hints(CompileSpec)
    top_names = [f.name for f in top_fields()]
    known_top = top_names + list(SECTIONS)
    top_kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key in SECTIONS:
            continue
        if key not in top_names:
            problems.append(Problem(key, f"Unknown key '{key}'.{_did_you_mean(key, known_top)}"))
            continue
        got, problem = _coerce(key, hints[key], value)
        if problem:
            problems.append(problem)
        else:
            top_kwargs[key] = got
    sections: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        body = data.get(section, {})
        if not isinstance(body, dict):
            problems.append(Problem(section, f"'{section}' must be a table of settings."))
            continue
        names = [f.name for f in section_fields(section)]
        sect_hints = typing.get_type_hints(cls)
        kwargs: dict[str, Any] = {}
        for key, value in body.items():
            where = f"{section}.{key}"
            if key not in names:
                # A key that belongs to another section is a common slip: point at where it lives.
                home = next((s for s in SECTIONS if s != section and key in [f.name for f in section_fields(s)]), None)
                hint = f" It belongs in [{home}]." if home else _did_you_mean(key, names)
                problems.append(Problem(where, f"Unknown key '{key}' in [{section}].{hint}"))
                continue
            got, problem = _coerce(where, sect_hints[key], value)
            if problem:
                problems.append(problem)
            else:
                kwargs[key] = got
        sections[section] = cls(**kwargs)
    if problems:
        raise SpecError(problems)
    return CompileSpec(**top_kwargs, **sections)


def dumps_toml(spec: CompileSpec) -> str:
    return tomli_w.dumps(to_dict(spec))


def loads_toml(text: str, source: str = "spec") -> CompileSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([Problem("", f"{source} is not valid TOML: {exc}.")]) from None
    return from_dict(data)


def load(path: str | Path) -> CompileSpec:
    """Read a spec from a .toml or .json file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError([Problem("", f"Spec file {p} does not exist.")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([Problem("", f"Cannot read spec file {p}: {exc}.")]) from None
    if p.suffix.lower() == ".json":
        return loads_json(text, str(p))
    return loads_toml(text, str(p))


def save(spec: CompileSpec, path: str | Path) -> Path:
    """Write a spec as TOML (or JSON for a .json path), atomically so a crash never leaves half a file."""
    p = Path(path)
    text = dumps_json(spec) if p.suffix.lower() == ".json" else dumps_toml(spec)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)
    return p


def dumps_json(spec: CompileSpec) -> str:
    return json.dumps(to_dict(spec), indent=2, sort_keys=False) + "\n"


def loads_json(text: str, source: str = "spec") -> CompileSpec:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError([Problem("", f"{source} is not valid JSON: {exc}.")]) from None
    return from_dict(data)


def neff_relevant(spec: CompileSpec) -> dict[str, Any]:
    """The values that can change the compiled NEFF, normalised so equivalent specs agree."""
    out: dict[str, Any] = {}
    for section in SECTIONS:
        sect = getattr(spec, section)
        body: dict[str, Any] = {}
        for f in section_fields(section):
            if not f.metadata["neff"] or not is_active(spec, section, f.name):
                continue
            value = getattr(sect, f.name)
            body[f.name] = list(value) if isinstance(value, tuple) else value
        out[section] = body
    # rotary_dim and partial_rotary_factor are two spellings of one number.
    model = out["model"]
    model.pop("partial_rotary_factor", None)
    model["rotary_dim"] = spec.model.effective_rotary_dim
    # As an input the table's values are data, not code: only its shape and dtype reach the NEFF.
    if spec.rope.cache_mode == "input":
        out["rope"] = {k: out["rope"][k] for k in ("max_pos", "cache_mode", "cache_dtype")}
    return out


def spec_hash(spec: CompileSpec) -> str:
    """Stable hex digest of what determines the NEFF (names, workdir, seeds and timeouts excluded)."""
    canonical = json.dumps(neff_relevant(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
