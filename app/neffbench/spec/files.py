"""Spec files: TOML for people, JSON for machines, plain dicts in between (the content hash: spec/hashing.py)."""

from __future__ import annotations

import dataclasses
import difflib
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import tomli_w

from neffbench.kernels import registry
from neffbench.schema.fields import hints_of, sections_of, tables_of, top_fields_of
from neffbench.schema.problems import Problem, SpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def _plain(value: Any) -> Any:
    """Tuples as lists, all the way down: what TOML and JSON hold."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    return value


def to_dict(spec: Any) -> dict[str, Any]:
    """Plain nested dict with every set value; ``None`` fields are left out (TOML has no null)."""
    out: dict[str, Any] = {"kernel": kernel_of(spec)}
    for f in top_fields_of(spec):
        value = getattr(spec, f.name)
        if value is not None:
            out[f.name] = _plain(value)
    for section in sections_of(spec):
        sect = getattr(spec, section)
        body: dict[str, Any] = {}
        for f in dataclasses.fields(sect):
            value = getattr(sect, f.name)
            if value is None:
                continue
            body[f.name] = _plain(value)
        out[section] = body
    for table in tables_of(spec):
        out[table] = _plain(getattr(spec, table))
    return out


def _did_you_mean(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def _type_name(tp: Any) -> str:
    if typing.get_origin(tp) is dict:
        return "a table"
    return {int: "a whole number", float: "a number", bool: "true or false", str: "text"}.get(tp, str(tp))


def _coerce(where: str, tp: Any, value: Any) -> tuple[Any, Problem | None]:
    """Convert a value read from a file to the field's type, or say what is wrong with it."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value, None
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
    if origin is dict:
        if not isinstance(value, dict):
            return None, Problem(where, f"must be a table, got {value!r}.")
        table = {}
        for key, item in value.items():
            got, problem = _coerce(f"{where}.{key}", args[1], item)
            if problem:
                return None, problem
            table[str(key)] = got
        return table, None
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


def kernel_of(spec: Any) -> str:
    """The kernel a spec is for (its class says)."""
    return getattr(spec, "kernel", registry.DEFAULT)


def spec_class(kernel: str) -> type:
    """The spec dataclass of a kernel; SpecError naming the kernel when there is none."""
    try:
        return registry.get(kernel).spec_class
    except KeyError as exc:
        raise SpecError([Problem("kernel", exc.args[0])]) from None


def from_dict(data: dict[str, Any], *, base_dir: str | Path | None = None) -> Any:
    """Build a spec from a nested dict; every unknown key and badly typed value is reported at once.

    ``kernel`` picks the spec's class (absent: ``rope``, as every spec before kernels existed).
    ``base_dir`` is the folder of the spec file, against which a kernel resolves relative paths.
    """
    spec, problems = from_dict_partial(data, base_dir=base_dir)
    if problems:
        raise SpecError(problems)
    return spec


def from_dict_partial(data: dict[str, Any], *, base_dir: str | Path | None = None) -> tuple[Any, list[Problem]]:
    """The spec of every well-typed value (a badly typed one keeps its default) and the problems of the others and
    of unknown keys, each under its field, so that validation can still list the rest. SpecError only when no spec
    can be made at all (not a table, an unknown kernel)."""
    if not isinstance(data, dict):
        raise SpecError([Problem("", "A spec must be a table of sections (model, rope, inputs, compiler).")])
    kernel = data.get("kernel", registry.DEFAULT)
    if not isinstance(kernel, str):
        raise SpecError([Problem("kernel", f"must be text naming a kernel, got {kernel!r}.")])
    cls = spec_class(kernel)
    sections = sections_of(cls)
    tables = tables_of(cls)
    problems: list[Problem] = []
    hints = hints_of(cls)
    top_names = [f.name for f in top_fields_of(cls)]
    known_top = ["kernel", *top_names, *sections, *tables]
    top_kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key == "kernel" or key in sections:
            continue
        if key not in top_names and key not in tables:
            problems.append(Problem(key, f"Unknown key '{key}'.{_did_you_mean(key, known_top)}"))
            continue
        got, problem = _coerce(key, hints[key], value)
        if problem:
            problems.append(problem)
        else:
            top_kwargs[key] = got
    parsed: dict[str, Any] = {}
    for section, sect_cls in sections.items():
        body = data.get(section, {})
        if not isinstance(body, dict):
            problems.append(Problem(section, f"'{section}' must be a table of settings."))
            continue
        names = [f.name for f in dataclasses.fields(sect_cls)]
        sect_hints = hints_of(sect_cls)
        kwargs: dict[str, Any] = {}
        for key, value in body.items():
            where = f"{section}.{key}"
            if key not in names:
                # A key that belongs to another section is a common slip: point at where it lives.
                home = next(
                    (s for s, c in sections.items() if s != section and key in [f.name for f in dataclasses.fields(c)]),
                    None,
                )
                hint = f" It belongs in [{home}]." if home else _did_you_mean(key, names)
                problems.append(Problem(where, f"Unknown key '{key}' in [{section}].{hint}"))
                continue
            got, problem = _coerce(where, sect_hints[key], value)
            if problem:
                problems.append(problem)
            else:
                kwargs[key] = got
        parsed[section] = sect_cls(**kwargs)
    spec = cls(**top_kwargs, **parsed)
    if base_dir is not None:
        spec = anchored(spec, base_dir)
    return spec, problems


def anchored(spec: Any, base_dir: str | Path) -> Any:
    """The spec with every relative path it holds (a module's entry, import path, input files) made absolute against
    ``base_dir``: the spec file's folder, or the folder a command was typed in (the window's: where it started).
    Paths are resolved once, here, so that the probe, the job and every rebuild read the same files."""
    return registry.get(kernel_of(spec)).anchor(spec, Path(base_dir))


def anchored_here(spec: Any) -> Any:
    """``anchored`` against the current folder: where the command was typed, or where the window was started (it
    never changes folder, and its builds run there too)."""
    return anchored(spec, Path.cwd())


def dumps_toml(spec: Any, *, mark_ignored: bool = True) -> str:
    """The spec as TOML for people. Values the spec ignores are marked as such (``neffbench.spec.marks``);
    ``mark_ignored=False`` writes every value plainly, for a copy that must come back exactly."""
    data = to_dict(spec)
    if not mark_ignored:
        return tomli_w.dumps(data)
    from neffbench.spec.marks import annotate, marks

    found = marks(spec)
    for mark in found:
        if mark.dropped:
            section, _, name = mark.key.rpartition(".")
            del (data[section] if section else data)[name]
    text = tomli_w.dumps(data)
    return annotate(text, spec, found) if found else text


def _parsed(text: str, source: str, *, json_text: bool) -> Any:
    if json_text:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError([Problem("", f"{source} is not valid JSON: {exc}.")]) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([Problem("", f"{source} is not valid TOML: {exc}.")]) from None


def loads_toml(text: str, source: str = "spec", *, base_dir: str | Path | None = None) -> Any:
    return from_dict(_parsed(text, source, json_text=False), base_dir=base_dir)


def load(path: str | Path) -> Any:
    """Read a spec from a .toml or .json file."""
    spec, problems = load_partial(path)
    if problems:
        raise SpecError(problems)
    return spec


def load_partial(path: str | Path) -> tuple[Any, list[Problem]]:
    """A spec file's spec of every well-typed value and the problems of the others (``from_dict_partial``);
    SpecError when it cannot be read or parsed at all."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError([Problem("", f"Spec file {p} does not exist.")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([Problem("", f"Cannot read spec file {p}: {exc}.")]) from None
    data = _parsed(text, str(p), json_text=p.suffix.lower() == ".json")
    return from_dict_partial(data, base_dir=p.resolve().parent)


def save(spec: Any, path: str | Path) -> Path:
    """Write a spec as TOML (or JSON for a .json path), atomically so a crash never leaves half a file."""
    p = Path(path)
    text = dumps_json(spec) if p.suffix.lower() == ".json" else dumps_toml(spec)
    from neffbench.procs import write_text as write_text_atomic

    return write_text_atomic(p, text)


def dumps_json(spec: Any) -> str:
    return json.dumps(to_dict(spec), indent=2, sort_keys=False) + "\n"


def loads_json(text: str, source: str = "spec", *, base_dir: str | Path | None = None) -> Any:
    return from_dict(_parsed(text, source, json_text=True), base_dir=base_dir)
