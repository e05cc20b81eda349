"""Field descriptions: the metadata every consumer of a spec reads (form, CLI, files, hash) and the walks over a spec.

A spec is a frozen dataclass of its kernel (``kernel`` is a class variable naming it): a few top
fields (name, description, workdir), sections that are dataclasses themselves (a kernel's own,
``inputs``, every kernel's ``compiler``) and, for kernels that need them, free tables (``dict``
fields: a kernel's inputs by name and its bucket axes). Each kernel's own sections live in its
folder under ``neffbench.kernels``.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import Any

from neffbench.words import number

DTYPES = ("float32", "bfloat16", "float16")


def ui(
    label: str,
    help: str,
    *,
    min: float | None = None,
    max: float | None = None,
    step: float | None = None,
    decimals: int | None = None,
    choices: tuple[str, ...] | None = None,
    choice_labels: dict[str, str] | None = None,
    reveals: dict[str, tuple[str, ...]] | None = None,
    neff: bool = True,
    optional: bool = False,
    advanced: bool = False,
) -> dict[str, Any]:
    """Field metadata shared by every consumer of the spec.

    ``neff`` says whether the value can change the compiled NEFF (it then enters the spec hash);
    ``choice_labels`` gives a choice the text a user reads (the value stays what files hold);
    ``reveals`` maps a choice to the sibling fields it makes active; ``optional`` means ``None``
    is a legal value (left out of files); ``decimals`` is how many decimals the field is usually given (the
    form's number boxes show every digit a value has, and keep every digit typed).
    """
    return {
        "label": label,
        "help": help,
        "min": min,
        "max": max,
        "step": step,
        "decimals": decimals,
        "choices": choices,
        "choice_labels": choice_labels,
        "reveals": reveals,
        "neff": neff,
        "optional": optional,
        "advanced": advanced,
    }


@functools.cache
def hints_of(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints`` of a spec class or section, evaluated once: spec classes never change once
    defined, and get_type_hints evaluates every annotation at each call (each spec read, each command's options)."""
    return typing.get_type_hints(cls)


def sections_of(spec: Any) -> dict[str, type]:
    """The spec's dataclass sections (``[model]``, ``[compiler]``, ...) in declaration order."""
    cls = spec if isinstance(spec, type) else type(spec)
    hints = hints_of(cls)
    return {
        f.name: hints[f.name]
        for f in dataclasses.fields(cls)
        if isinstance(hints[f.name], type) and dataclasses.is_dataclass(hints[f.name])
    }


def tables_of(spec: Any) -> dict[str, Any]:
    """The spec's free tables (``dict`` fields at the top level, e.g. the module kernel's ``[inputs]``)."""
    cls = spec if isinstance(spec, type) else type(spec)
    hints = hints_of(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if typing.get_origin(hints[f.name]) is dict}


def top_fields_of(spec: Any) -> tuple[dataclasses.Field, ...]:
    cls = spec if isinstance(spec, type) else type(spec)
    skip = set(sections_of(cls)) | set(tables_of(cls))
    return tuple(f for f in dataclasses.fields(cls) if f.name not in skip)


def fields_of(spec: Any, section: str) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(sections_of(spec)[section])


def is_active(spec: Any, section: str, name: str) -> bool:
    """Whether a field means anything given the choices made elsewhere in its section."""
    sect = getattr(spec, section)
    for f in fields_of(spec, section):
        reveals = f.metadata.get("reveals")
        if not reveals:
            continue
        controlled = {n for names in reveals.values() for n in names}
        if name in controlled:
            return name in reveals.get(getattr(sect, f.name), ())
    return True


def check_ranges(spec: Any, problems: list, skip: set[str] | frozenset[str]) -> None:
    """Generic bounds and choices from field metadata, for fields without a rule of their own."""
    from neffbench.schema.problems import Problem

    for section in sections_of(spec):
        sect = getattr(spec, section)
        for f in fields_of(spec, section):
            where = f"{section}.{f.name}"
            if where in skip or not is_active(spec, section, f.name):
                continue
            meta = f.metadata
            value = getattr(sect, f.name)
            label = meta["label"]
            if value is None:
                if not meta["optional"]:
                    problems.append(Problem(where, f"{label} must be set."))
                continue
            if meta["choices"] is not None:
                if value not in meta["choices"]:
                    problems.append(
                        Problem(where, f"{label} must be one of {', '.join(meta['choices'])}; got {value!r}.")
                    )
                continue
            problems += range_problems(where, meta, value)


def range_problems(where: str, meta: Mapping[str, Any], value: Any, *, upper_only: bool = False) -> list:
    """A problem for each number in ``value`` (one, or a tuple's) outside the field's min and max; ``upper_only``
    checks the max alone (for fields whose kernel checks the lower bound in its own words)."""
    from neffbench.schema.problems import Problem

    lo, hi = (None if upper_only else meta["min"]), meta["max"]
    if lo is None and hi is None:
        return []
    if lo is not None and hi is not None:
        bounds = f"between {number(lo)} and {number(hi)}"
    else:
        bounds = f"at least {number(lo)}" if lo is not None else f"at most {number(hi)}"
    out = []
    for v in value if isinstance(value, tuple) else (value,):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            out.append(Problem(where, f"{meta['label']} must be {bounds}; got {number(v)}."))
    return out


def with_ranges(spec: Any, own: list, own_checks: set[str] | frozenset[str]) -> list:
    """The generic range problems, then ``own`` (the kernel's rules, which check the ranges of ``own_checks`` in
    their own words). A field of ``own_checks`` still has its max, said once, where its rules did not blame it."""
    problems: list = []
    check_ranges(spec, problems, own_checks)
    blamed = {p.field for p in own if p.severity == "error"}
    upper: list = []
    _check_upper_bounds(spec, upper, own_checks)
    return problems + [p for p in upper if p.field not in blamed] + own


def _check_upper_bounds(spec: Any, problems: list, fields: set[str] | frozenset[str]) -> None:
    """The max of ``fields``, for active, set values: what the form's spin boxes used to enforce by clamping, and
    a file could always pass."""
    for key in sorted(fields):
        section, _, name = key.rpartition(".")
        if not section or section not in sections_of(spec) or not is_active(spec, section, name):
            continue
        f = next((f for f in fields_of(spec, section) if f.name == name), None)
        value = getattr(getattr(spec, section), name, None)
        if f is not None and value is not None:
            problems += range_problems(key, f.metadata, value, upper_only=True)
