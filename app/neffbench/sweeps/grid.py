"""A sweep's grid: ``FIELD=V1,V2`` lists parsed by the spec's schema, crossed (or zipped) into points, one job each.

A point is one job: one combination of the swept values and one bucket. A combination whose spec has
several buckets (``inputs.num_tokens=[1,8]``, or a spec listing several while other fields are swept)
gives one point per bucket, so every point has its own outcome, times and NEFF in the table.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import shlex
import sys
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.jobs.memory_estimate import Estimate, estimate
from neffbench.kernels import registry
from neffbench.kernels.bucket_words import bucket_label, bucket_phrase
from neffbench.spec import Problem, SpecError, from_dict, to_dict, validate
from neffbench.sweeps.fields import assign, display_labels, normalised, resolve, sweepable, unoptional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# A grid is crossed before anything runs; this many points is already days of compiling.
MAX_POINTS = 10_000
_OPEN, _CLOSE = "[{(", "]})"

# The command line's wording of two plan problems; the window's sweep dialog words them its own way.
NO_AXES = "name at least one field to sweep: --over FIELD=V1,V2,..."
SWEPT_TWICE = " is swept twice: give all its values in one --over"


class PlanError(ValueError):
    """An ``--over`` that cannot be read (no ``=``, an unknown field, unbalanced brackets): one sentence."""


@dataclass(frozen=True)
class Axis:
    """One swept field and its values, as the schema reads them (``texts`` as they were typed)."""

    field: str
    values: tuple[Any, ...]
    texts: tuple[str, ...]

    @property
    def short(self) -> str:
        return self.field.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Point:
    """One job of the sweep: its swept values, its bucket, its single-bucket spec and what is wrong with it."""

    index: int
    values: dict[str, Any]
    bucket: dict[str, int]
    spec: Any | None
    problems: tuple[Problem, ...] = ()
    memory: Estimate | None = None
    # What its build reads (jobs.prepare), found before anything runs, for kernels that run the user's code.
    prepared: Any = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def valid(self) -> bool:
        return self.spec is not None and not self.errors

    def label(self, short: Mapping[str, str] | None = None) -> str:
        """``optlevel=1 num_tokens=8``: the swept values (by ``short`` names), then the bucket if not swept."""
        short = short or {}
        parts = []
        for name, value in self.values.items():
            tail = name.rsplit(".", 1)[-1]
            # A swept bucket axis reads as this point's bucket: [8,32] gives two points, 8 and 32.
            parts.append(f"{short.get(name, name)}={self.bucket[tail] if tail in self.bucket else _text(value)}")
        swept = {short.get(k, k) for k in self.values} | {k.rsplit(".", 1)[-1] for k in self.values}
        parts += [f"{k}={v}" for k, v in self.bucket.items() if k not in swept]
        return " ".join(parts) or bucket_label(self.bucket)

    def words(self, labels: Mapping[str, str]) -> str:
        """``Opt level 1, Tokens 8``: the swept values by the fields' labels (the window's words for ``label``)."""
        parts = []
        for name, value in self.values.items():
            tail = name.rsplit(".", 1)[-1]
            shown = self.bucket[tail] if tail in self.bucket else words_of(value)
            parts.append(f"{labels.get(name, tail)} {shown}")
        swept = {k.rsplit(".", 1)[-1] for k in self.values}
        rest = {k: v for k, v in self.bucket.items() if k not in swept}
        return ", ".join(parts + ([bucket_phrase(rest)] if rest else [])) or bucket_phrase(self.bucket)


@dataclass
class SweepPlan:
    """What a sweep will run: its points (valid or not) and, when the grid itself is wrong, why."""

    base: Any
    axes: tuple[Axis, ...]
    zip: bool
    backend: str
    points: list[Point] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Groups of valid points that would compile the same thing (the same cache key): (indexes, the swept fields
    # that differ between them and so change nothing).
    duplicates: list[tuple[list[int], list[str]]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.points)

    @property
    def valid(self) -> list[Point]:
        return [p for p in self.points if p.valid]

    @property
    def invalid(self) -> list[Point]:
        return [p for p in self.points if not p.valid]

    @property
    def memory_bytes(self) -> int | None:
        """The largest estimate of any valid point (what one job at a time needs)."""
        sizes = [p.memory.bytes for p in self.valid if p.memory is not None]
        return max(sizes) if sizes else None

    @property
    def short_names(self) -> dict[str, str]:
        """Each swept field by its last part, or in full where two fields share a last part."""
        tails = [a.short for a in self.axes]
        return {a.field: (a.short if tails.count(a.short) == 1 else a.field) for a in self.axes}

    @property
    def labels(self) -> dict[int, str]:
        """Each point's label by its index (``optlevel=1 num_tokens=8``), as logs and tables name it."""
        short = self.short_names
        return {p.index: p.label(short) for p in self.points}

    @property
    def words(self) -> dict[int, str]:
        """Each point in the sweep dialog's words by its index (``Opt level 1, Tokens 8``): the window's rows."""
        labels = display_labels(sweepable(self.base))
        return {p.index: p.words(labels) for p in self.points}


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def words_of(value: Any) -> str:
    """A value as a sentence reads it: lists as ``1 and 8``, booleans as yes and no, text as it is."""
    if isinstance(value, (list, tuple)):
        items = [words_of(v) for v in value]
        return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def split_values(text: str) -> list[str]:
    """``1,2`` / ``[1,8],[32]`` / ``"a,b",c``: commas inside brackets or quotes do not split."""
    out: list[str] = []
    current: list[str] = []
    depth, quote = 0, None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                raise PlanError(f"'{text}' closes a bracket it never opened")
        elif ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if quote or depth:
        raise PlanError(f"'{text}' has an unclosed {'quote' if quote else 'bracket'}")
    out.append("".join(current).strip())
    return out


def _toml(text: str) -> tuple[Any, bool]:
    try:
        return tomllib.loads(f"v = {text}")["v"], True
    except tomllib.TOMLDecodeError:
        return text, False


def parse_value(text: str, tp: Any = Any) -> Any:
    """One value as typed, read for a field of type ``tp``: text stays text (quotes optional), shell words
    for argument lists (as ``--extra-args`` takes them), TOML for the rest (``8``, ``1e-6``, ``true``, ``[1,8]``)."""
    inner = unoptional(tp)
    if inner is str:
        value, ok = _toml(text)
        return value if ok and isinstance(value, str) else text
    if typing.get_origin(inner) is tuple and typing.get_args(inner)[:1] == (str,):
        value, ok = _toml(text)
        return value if ok and isinstance(value, list) else shlex.split(text)
    return _toml(text)[0]


def parse_over(spec: Any, text: str) -> Axis:
    """``FIELD=V1,V2,...`` for ``spec``'s kernel, or PlanError saying what is wrong with it."""
    name, found, values = text.partition("=")
    name = name.strip()
    if not found or not name:
        raise PlanError(f"--over '{text}' is not FIELD=V1,V2,... (for example compiler.optlevel=1,2)")
    return axis(spec, name, split_values(values))


def axis(spec: Any, name: str, texts: Sequence[Any]) -> Axis:
    """One swept field with its values: texts are read by the field's type, other values taken as they are."""
    name = normalised(spec, name)
    tp, problem = resolve(spec, name)
    if problem:
        raise PlanError(problem)
    if not texts or any(isinstance(t, str) and not t for t in texts):
        raise PlanError(f"{name}: give one or more values, separated by commas (an empty value is not one)")
    values = tuple(parse_value(t, tp) if isinstance(t, str) else t for t in texts)
    return Axis(name, values, tuple(t if isinstance(t, str) else _text(t) for t in texts))


def combinations(axes: Sequence[Axis], *, zipped: bool = False) -> list[tuple[Any, ...]]:
    """The cartesian product of the axes' values, or with ``zipped`` their values side by side."""
    if zipped:
        lengths = {a.field: len(a.values) for a in axes}
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{f} has {n}" for f, n in lengths.items())
            raise PlanError(f"--zip pairs lists of one length: {listed} value(s)")
        return list(zip(*(a.values for a in axes)))
    count = math.prod(len(a.values) for a in axes)
    if count > MAX_POINTS:  # before the product is built: ten fields of ten values would not fit in memory
        raise PlanError(f"the grid has {count:,} combinations; a sweep takes at most {MAX_POINTS:,}")
    return list(itertools.product(*(a.values for a in axes)))


def plan(
    spec: Any,
    overs: Sequence[str | tuple[str, Any]] | Mapping[str, Sequence[Any]],
    *,
    zip: bool = False,  # noqa: A002
    backend: str = "auto",
    memory_per_job: float | None = None,
) -> SweepPlan:
    """The points of sweeping ``spec`` over ``overs`` (``["compiler.optlevel=1,2"]`` or ``{"compiler.optlevel":
    [1, 2]}``). Never raises for bad input: ``plan.problems`` says what is wrong with the grid itself (then
    there are no points), each point's ``problems`` what is wrong with it. ``memory_per_job`` (bytes)
    replaces every point's estimate; ``backend`` is what the estimate is for (``auto`` as a compile resolves it)."""
    from neffbench.jobs.cache import predicted_backend

    resolved = predicted_backend(backend)
    result = SweepPlan(spec, (), zip, resolved)
    if isinstance(overs, str):
        overs = [overs]
    given = list(overs.items()) if isinstance(overs, Mapping) else list(overs)
    axes = []
    for item in given:
        try:
            if isinstance(item, tuple):
                name, listed = item
                axes.append(axis(spec, name, split_values(listed) if isinstance(listed, str) else list(listed)))
            else:
                axes.append(parse_over(spec, item))
        except PlanError as exc:
            result.problems.append(Problem("over", str(exc)))
    if not given:
        result.problems.append(Problem("over", NO_AXES))
    seen = [a.field for a in axes]
    for twice in sorted({f for f in seen if seen.count(f) > 1}):
        result.problems.append(Problem("over", f"{twice}{SWEPT_TWICE}"))
    if result.problems:
        return result
    result.axes = tuple(axes)
    try:
        combos = combinations(axes, zipped=zip)
    except PlanError as exc:
        result.problems.append(Problem("over", str(exc)))
        return result
    base = to_dict(spec)
    kernel = registry.for_spec(spec)
    override = int(memory_per_job) if memory_per_job is not None else None
    for combo in combos:
        values = {a.field: combo[i] for i, a in enumerate(axes)}
        data = copy.deepcopy(base)
        for name, value in values.items():
            assign(data, name, value)
        try:
            # Swept paths (a module entry, an input file) are relative to where the command was typed.
            full = from_dict(data, base_dir=Path.cwd())
        except SpecError as exc:
            result.points.append(Point(len(result.points), values, {}, None, tuple(exc.problems)))
            continue
        problems = validate(full)
        if any(p.severity == "error" for p in problems):
            result.points.append(Point(len(result.points), values, {}, None, tuple(problems)))
            continue
        for bucket in kernel.buckets(full):
            single = kernel.for_bucket(full, bucket)
            mine = tuple(validate(single))
            ok = not any(p.severity == "error" for p in mine)
            memory = estimate(single, resolved, override_bytes=override) if ok else None
            result.points.append(Point(len(result.points), values, dict(bucket), single if ok else None, mine, memory))
    if len(result.points) > MAX_POINTS:
        result.problems.append(
            Problem(
                "over",
                f"the grid gives {len(result.points):,} jobs (each bucket is one); "
                f"a sweep takes at most {MAX_POINTS:,}",
            )
        )
        result.points = []
    result.duplicates = duplicates(result.valid, resolved)
    return result


def duplicates(points: Sequence[Point], backend: str) -> list[tuple[list[int], list[str]]]:
    """Points whose specs, once resolved, compile the same thing with ``backend`` (one cache key): a field that
    is ignored (one the kernel's ignored_fields names; cpu-check runs no compiler, so no compiler option
    counts), swept anyway, would give the same NEFF under different labels."""
    from neffbench.backends import registry as backends
    from neffbench.jobs import cache

    groups: dict[str, list[Point]] = {}
    for point in points:
        spec = point.spec
        if spec is None:  # an invalid point compiles nothing
            continue
        if not backends.get(backend).runs_compiler:  # the compiler's options cannot change what it checks
            spec = dataclasses.replace(spec, compiler=type(spec.compiler)())
        groups.setdefault(cache.digest(cache.key(spec, backend)), []).append(point)
    out = []
    for same in groups.values():
        if len(same) < 2:
            continue
        varying = [name for name in same[0].values if len({_text(p.values[name]) for p in same}) > 1]
        out.append(([p.index for p in same], varying))
    return out
