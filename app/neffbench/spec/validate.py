"""Validation: every problem of a spec at once, errors that block a compile and warnings that do not."""

from __future__ import annotations

import re
import shlex

from typing import Any

from neffbench import targets
from neffbench.spec.problems import Problem
from neffbench.spec.schema import fields_of, is_active, sections_of

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
LNC_TARGETS = targets.LNC_FAMILIES

# Options the spec has a field for: giving them in extra args too is a contradiction waiting to happen.
_FIELD_OPTIONS = {
    "--target": "target",
    "--lnc": "lnc",
    "--logical-nc-config": "lnc",
    "--optlevel": "optlevel",
    "--auto-cast": "auto_cast",
    "--auto-cast-type": "auto_cast_type",
    "--model-type": "model_type",
}
# Options the workbench sets itself so that it can find the NEFF and the log.
_RESERVED_OPTIONS = ("--output", "--logfile", "--framework")


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def parse_extra_args(extra: tuple[str, ...] | list[str]) -> list[tuple[str, str | None]]:
    """Pair each option in extra args with its value ('--opt=v', '--opt v', '-O3' all understood)."""
    out: list[tuple[str, str | None]] = []
    tokens = list(extra)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if re.fullmatch(r"-O[0-9]", tok):
            out.append(("--optlevel", tok[2:]))
        elif tok.startswith("--") and "=" in tok:
            opt, value = tok.split("=", 1)
            out.append((opt, value))
        elif tok.startswith("-"):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and not nxt.startswith("-"):
                out.append((tok, nxt))
                i += 1
            else:
                out.append((tok, None))
        i += 1
    return out


def split_extra_args(text: str) -> tuple[str, ...]:
    """Shell-split extra args typed as one line; raises ValueError with shlex's reason."""
    return tuple(shlex.split(text))


def check_ranges(spec: Any, problems: list[Problem], skip: set[str] | frozenset[str]) -> None:
    """Generic bounds and choices from field metadata, for fields without a rule of their own."""
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
                    problems.append(_error(where, f"{label} must be set."))
                continue
            if meta["choices"] is not None:
                if value not in meta["choices"]:
                    problems.append(_error(where, f"{label} must be one of {', '.join(meta['choices'])}; got {value!r}."))
                continue
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                lo, hi = meta["min"], meta["max"]
                if (lo is not None and v < lo) or (hi is not None and v > hi):
                    problems.append(_error(where, f"{label} must be between {lo:g} and {hi:g}; got {v:g}."))


def _compiler_rules(spec: Any, problems: list[Problem]) -> None:
    c = spec.compiler
    if c.lnc is not None and c.target not in LNC_TARGETS:
        problems.append(_warning("compiler.lnc", f"neuronx-cc documents --lnc for Trn2 and later only; "
                                                 f"target {c.target} may reject or ignore it."))
    if c.auto_cast != "none":
        problems.append(_warning("compiler.auto_cast", f"--auto-cast {c.auto_cast} to {c.auto_cast_type} changes "
                                                       "numerics: expect a larger error against the reference."))
    fields = {"target": c.target, "lnc": c.lnc, "optlevel": c.optlevel, "auto_cast": c.auto_cast,
              "auto_cast_type": c.auto_cast_type, "model_type": c.model_type}
    for opt, value in parse_extra_args(c.extra_args):
        if opt in _RESERVED_OPTIONS:
            problems.append(_error("compiler.extra_args", f"Extra args must not set {opt}: the workbench sets it "
                                                          "so that it can find the NEFF and the log."))
        elif opt in _FIELD_OPTIONS:
            name = _FIELD_OPTIONS[opt]
            have = fields[name]
            if value is None or have is None or str(have) != value:
                problems.append(_error("compiler.extra_args",
                                       f"Extra args set {opt} {value or ''}".rstrip() +
                                       f" but the {name} field is {have}; set the {name} field instead."))
            else:
                problems.append(_warning("compiler.extra_args", f"{opt} {value} in extra args repeats the "
                                                                f"{name} field."))
    if c.fast_loading and "--enable-fast-loading-neuron-binaries" in c.extra_args:
        problems.append(_warning("compiler.extra_args", "--enable-fast-loading-neuron-binaries repeats the "
                                                        "fast-loading field."))


def validate(spec: Any) -> list[Problem]:
    """Every problem of the spec, errors first; never raises for a spec of the right types."""
    from neffbench.kernels import registry

    kernel = registry.for_spec(spec)
    problems: list[Problem] = []
    if not NAME_RE.match(spec.name or ""):
        problems.append(_error("name", f"Name must be 1-64 letters, digits, '.', '-' or '_', starting with a "
                                       f"letter or digit; got {spec.name!r}."))
    if not spec.workdir.strip():
        problems.append(_error("workdir", "Workdir must be set."))
    check_ranges(spec, problems, skip=kernel.own_range_checks)
    problems += kernel.validate(spec)
    _compiler_rules(spec, problems)
    return sorted(problems, key=lambda p: p.severity != "error")


def errors(spec: Any) -> list[Problem]:
    return [p for p in validate(spec) if p.severity == "error"]
