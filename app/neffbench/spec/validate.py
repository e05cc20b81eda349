"""Validation: every problem of a spec at once, errors that block a compile and warnings that do not."""

from __future__ import annotations

import re
from typing import Any

from neffbench.kernels import registry
from neffbench.schema.compiler import compiler_problems
from neffbench.schema.fields import with_ranges
from neffbench.schema.problems import Problem

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def validate(spec: Any) -> list[Problem]:
    """Every problem of the spec, errors first; never raises for a spec of the right types."""
    kernel = registry.for_spec(spec)
    problems: list[Problem] = []
    if not NAME_RE.match(spec.name or ""):
        problems.append(
            Problem(
                "name",
                f"Name must be 1-64 letters, digits, '.', '-' or '_', starting with a "
                f"letter or digit; got {spec.name!r}.",
            )
        )
    if not spec.workdir.strip():
        problems.append(Problem("workdir", "Workdir must be set."))
    problems += with_ranges(spec, kernel.validate(spec), kernel.own_range_checks)
    compiler_problems(spec, problems)
    return sorted(problems, key=lambda p: p.severity != "error")


def errors(spec: Any) -> list[Problem]:
    return [p for p in validate(spec) if p.severity == "error"]
