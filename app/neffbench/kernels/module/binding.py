"""Binding a spec's inputs and constants to the forward signature by name, before anything runs.

Each problem is one sentence naming the parameter, the input or the constant. Pure inspection:
no tensor is built and the user's code is not called.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from typing import Any

from neffbench.kernels.module.signature import widget_for

_SCALAR_NAMES = {"int": "an int", "float": "a float", "bool": "a bool", "str": "a str"}


@dataclass
class Binding:
    """Which forward parameters get tensors (in signature order) and which get constants."""

    inputs: list[str] = field(default_factory=list)
    positional_only: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _scalar_kind(p: inspect.Parameter, hints: dict[str, Any]) -> str | None:
    """'a float' when the parameter plainly takes a non-tensor scalar (by annotation or default)."""
    widget = widget_for(hints.get(p.name, p.annotation), p.default)["widget"]
    if widget in _SCALAR_NAMES:
        return _SCALAR_NAMES[widget]
    if widget == "choices":
        return "a choice of values"
    return None


def bind(target: Any, label: str, inputs: list[str], constants: dict[str, Any]) -> Binding:
    """Match input names (from [inputs] or the examples function) and constants to ``target``'s parameters.

    ``label`` is how the target reads in a sentence ("MLP.forward").
    """
    out = Binding()
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        out.errors.append(f"{label} has no signature Python can read, so inputs cannot be bound by name.")
        return out
    import typing

    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable annotations: judge by defaults alone
        hints = {}
    params = [p for p in sig.parameters.values() if p.name != "self"]
    named = {p.name: p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    var_pos = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    var_kw = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    given = set(inputs)
    if var_pos is not None and not named:
        out.errors.append(
            f"{label} takes only *{var_pos.name}, so inputs cannot be bound by name: give it named "
            "parameters (or wrap it in a module that has them)."
        )
        return out
    _check_names(out, label, inputs, constants, named, var_kw)
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        _bind_parameter(out, label, p, params, given, constants, _scalar_kind(p, hints))
    if var_pos is not None and named:
        out.warnings.append(f"{label} also takes *{var_pos.name}: nothing is passed there.")
    return out


def _check_names(
    out: Binding,
    label: str,
    inputs: list[str],
    constants: dict[str, Any],
    named: dict[str, inspect.Parameter],
    var_kw: inspect.Parameter | None,
) -> None:
    """Each input and constant must name a parameter (the closest one is suggested), and no name may be both."""
    given = set(inputs)
    for name in inputs:
        if name in named:
            continue
        if name in constants:
            continue
        if var_kw is not None:
            out.errors.append(
                f"input '{name}' names no parameter of {label} and would only reach "
                f"**{var_kw.name}, which a traced graph cannot bind by name; give {label} a "
                f"parameter '{name}'."
            )
            continue
        close = difflib.get_close_matches(name, list(named), n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else f" Its parameters: {', '.join(named) or 'none'}."
        out.errors.append(f"input '{name}' names no parameter of {label}.{hint}")
    for name in constants:
        if name in given:
            out.errors.append(f"'{name}' is both an input and a constant; keep one.")
        elif name not in named and var_kw is None:
            close = difflib.get_close_matches(name, list(named), n=1, cutoff=0.6)
            hint = f" Did you mean '{close[0]}'?" if close else f" Its parameters: {', '.join(named) or 'none'}."
            out.errors.append(f"constant '{name}' names no parameter of {label}.{hint}")


def _bind_parameter(
    out: Binding,
    label: str,
    p: inspect.Parameter,
    params: list[inspect.Parameter],
    given: set[str],
    constants: dict[str, Any],
    scalar: str | None,
) -> None:
    """One named parameter: an input (a tensor), a constant, its default, or a problem."""
    if p.name in given:
        if scalar is not None:
            out.errors.append(
                f"parameter '{p.name}' of {label} takes {scalar}, not a tensor: bind "
                f"`{p.name}` as a constant ([module.constants] {p.name} = ...)."
            )
            return
        out.inputs.append(p.name)
        if p.kind is p.POSITIONAL_ONLY:
            out.positional_only.add(p.name)
        if p.kind is p.KEYWORD_ONLY:
            out.warnings.append(
                f"parameter '{p.name}' of {label} is keyword-only: the traced wrapper passes "
                "it by name, and so does reproduce.py."
            )
    elif p.name in constants:
        if p.kind is p.POSITIONAL_ONLY:
            out.errors.append(
                f"parameter '{p.name}' of {label} is positional-only, so it cannot be bound as a constant by name."
            )
    elif p.default is inspect.Parameter.empty:
        if scalar is not None:
            out.errors.append(
                f"parameter '{p.name}' of {label} takes {scalar} and has no default: bind "
                f"`{p.name}` as a constant ([module.constants] {p.name} = ...)."
            )
        else:
            out.errors.append(
                f"parameter '{p.name}' of {label} has no input and no default: add it under "
                "[inputs] (or [module.constants] for a non-tensor)."
            )
    elif p.kind is p.POSITIONAL_ONLY and any(
        q.name in given for q in params[params.index(p) + 1 :] if q.kind is q.POSITIONAL_ONLY
    ):
        out.errors.append(
            f"parameter '{p.name}' of {label} is positional-only and comes before an input, "
            "so it needs an input (or a constant) too."
        )
