"""The module kernel's checks that need no import of the user's code: entry syntax, tensor specs, buckets, names."""

from __future__ import annotations

import keyword
import math
import re
from pathlib import Path
from typing import Any

from neffbench.kernels.module import entry as entries
from neffbench.kernels.module import tensors
from neffbench.kernels.module.params import ModuleCompileSpec
from neffbench.schema.problems import Problem

MAX_BUCKETS = 256  # combinations; more is almost surely a typo, and each one is a compile
# Constructor arguments that count something (num_layers, num_hidden_layers, n_layer, n_head, depth): a negative
# one builds no error, only an empty nn.ModuleList (range(-1) is empty), and a NEFF of nothing.
_COUNT_NAME = re.compile(r"^(n|num|number)_|(^|_)(layers|blocks|heads|experts|depth|count)$|^n_?(layer|head|block)s?$")


def _error(field: str, message: str) -> Problem:
    return Problem(field, message, "error")


def _warning(field: str, message: str) -> Problem:
    return Problem(field, message, "warning")


def _check_entry(field: str, text: str, problems: list[Problem], *, what: str = "the entry") -> None:
    try:
        parsed = entries.parse(text)
    except entries.EntryError as exc:
        problems.append(_error(field, str(exc)[0].upper() + str(exc)[1:]))
        return
    if parsed.is_file and not Path(parsed.target).is_file():
        problems.append(_error(field, f"The file of {what}, {parsed.target}, does not exist."))


def _negative_counts(kwargs: dict[str, Any], where: str, problems: list[Problem]) -> None:
    """A count among the constructor's arguments (and a nested config's) that is below zero."""
    for name, value in kwargs.items():
        if isinstance(value, dict) and isinstance(value.get("kwargs"), dict):
            _negative_counts(value["kwargs"], f"{where}.{name}.kwargs", problems)
        elif isinstance(value, int) and not isinstance(value, bool) and value < 0 and _COUNT_NAME.search(name):
            problems.append(_error(f"{where}.{name}", f"{name} is a count: it cannot be negative (it is {value})."))


def unknown_axes(spec: ModuleCompileSpec) -> list[str]:
    """The ``{axis}`` names the inputs use that the buckets do not have, in the order the inputs name them: what
    their errors name, and what the form's Add axis offers first."""
    out: list[str] = []
    for text in spec.inputs.values():
        try:
            axes = tensors.parse(text).axes()
        except tensors.TensorSpecError:
            continue
        out += [axis for axis in axes if axis not in spec.buckets and axis not in out]
    return out


def validate(spec: ModuleCompileSpec) -> list[Problem]:
    problems: list[Problem] = []
    m = spec.module
    if not m.entry.strip():
        problems.append(
            _error("module.entry", "Set the entry to compile: 'package.module:attr' or 'path/to/file.py:attr'.")
        )
    else:
        _check_entry("module.entry", m.entry, problems)
    if m.examples:
        _check_entry("module.examples", m.examples, problems, what="the examples function")
    _negative_counts(m.kwargs, "module.kwargs", problems)
    for folder in m.path:
        if not Path(folder).is_dir():
            problems.append(_error("module.path", f"Import path folder {folder} does not exist."))
    if not spec.inputs and not m.examples:
        problems.append(
            _error(
                "inputs",
                "No inputs: give one tensor spec per forward parameter under [inputs] "
                '(such as x = "f32[{tokens},64]"), or an examples function.',
            )
        )
    used_axes: set[str] = set()
    for name, text in spec.inputs.items():
        where = f"inputs.{name}"
        if not name.isidentifier() or keyword.iskeyword(name):
            problems.append(_error(where, f"Input name '{name}' is not a Python parameter name."))
        try:
            parsed = tensors.parse(text)
        except tensors.TensorSpecError as exc:
            problems.append(_error(where, f"{exc}."))
            continue
        for axis in parsed.axes():
            used_axes.add(axis)
            if axis not in spec.buckets:
                have = ", ".join(spec.buckets) or "none"
                problems.append(
                    _error(where, f"Input '{name}' uses {{{axis}}}, which is not a [buckets] axis (axes: {have}).")
                )
        if parsed.init.kind == "file" and not Path(parsed.init.args[0]).is_file():
            problems.append(_error(where, f"Input '{name}' reads {parsed.init.args[0]}, which does not exist."))
    for name in spec.module.constants:
        if name in spec.inputs:
            problems.append(_error(f"module.constants.{name}", f"'{name}' is both an input and a constant; keep one."))
    _check_sizes(spec, problems)
    combos = 1
    for axis, values in spec.buckets.items():
        where = f"buckets.{axis}"
        if not axis.isidentifier():
            problems.append(_error(where, f"Bucket axis '{axis}' is not a name (letters, digits, '_')."))
        if not values:
            problems.append(_error(where, f"Bucket axis '{axis}' lists no values."))
        seen: set[int] = set()
        for v in values:
            if v < 1:
                problems.append(_error(where, f"Every value of {axis} must be at least 1; got {v}."))
            elif v in seen:
                problems.append(_error(where, f"{axis} = {v} is listed twice."))
            seen.add(v)
        combos *= max(len(values), 1)
        if axis not in used_axes and not m.examples:
            problems.append(
                _warning(where, f"Bucket axis '{axis}' is used by no input, so its buckets compile the same NEFF.")
            )
    if combos > MAX_BUCKETS:
        problems.append(
            _error(
                "buckets", f"The buckets make {combos} combinations, more than {MAX_BUCKETS}; each one is a compile."
            )
        )
    return problems


_ITEM_BYTES = {
    "float64": 8,
    "int64": 8,
    "float32": 4,
    "int32": 4,
    "bfloat16": 2,
    "float16": 2,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}


def _check_sizes(spec: ModuleCompileSpec, problems: list[Problem]) -> None:
    """Inputs of the largest bucket that this machine's memory could not even hold: refused in words before
    anything tries to allocate them (the allocator's own message names no input)."""
    from neffbench.machine_memory import gib, total_bytes

    total = total_bytes()
    if total is None:
        return
    largest = {axis: max(values) for axis, values in spec.buckets.items() if values and min(values) >= 1}
    sizes: dict[str, int] = {}
    for name, text in spec.inputs.items():
        try:
            parsed = tensors.parse(text)
            shape = parsed.shape(largest)
        except tensors.TensorSpecError:
            continue  # reported with the spec's other problems
        sizes[name] = math.prod(shape) * _ITEM_BYTES.get(parsed.dtype, 4)
    for name, size in sizes.items():
        if size > total:
            problems.append(
                _error(
                    f"inputs.{name}",
                    f"Input '{name}' needs {gib(size)} at the largest bucket "
                    f"({_bucket_text(largest)}); this machine has {gib(total)}.",
                )
            )
    if all(size <= total for size in sizes.values()) and sum(sizes.values()) > total:
        problems.append(
            _error(
                "inputs",
                f"The inputs need {gib(sum(sizes.values()))} together at the largest "
                f"bucket ({_bucket_text(largest)}); this machine has {gib(total)}.",
            )
        )


def _bucket_text(bucket: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in bucket.items()) or "no bucket axes"
