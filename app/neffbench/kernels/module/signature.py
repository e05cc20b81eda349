"""Signatures as the form and ``neffbench resolve`` show them: each parameter's kind, type, default and widget.

Follows magicgui: the annotation picks the widget (int, float, bool, str; ``Literal``/Enum become
choices; ``Annotated[int, {"min": 0, "max": 10}]`` carries a range) and the default fills it.
Tensor-typed parameters are inputs; everything here is plain data that survives JSON.
"""

from __future__ import annotations

import enum
import inspect
import typing
from typing import Any

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional-or-keyword",
    inspect.Parameter.VAR_POSITIONAL: "*args",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "**kwargs",
}
_SCALARS = {int: "int", float: "float", bool: "bool", str: "str"}


def _plain(value: Any) -> Any:
    """A default as JSON can hold it (or its repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    return repr(value)


def _range(meta: tuple[Any, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in meta:
        if isinstance(m, dict):
            out.update({k: m[k] for k in ("min", "max", "step") if k in m})
        for attr, key in (("ge", "min"), ("gt", "min"), ("le", "max"), ("lt", "max")):
            if hasattr(m, attr):
                out[key] = getattr(m, attr)
    return out


def widget_for(annotation: Any, default: Any = inspect.Parameter.empty) -> dict[str, Any]:
    """What kind of field an annotation (or, without one, a default) asks for."""
    ann = annotation
    extra: dict[str, Any] = {}
    if typing.get_origin(ann) is typing.Annotated:
        base, *meta = typing.get_args(ann)
        extra = _range(tuple(meta))
        ann = base
    origin = typing.get_origin(ann)
    if origin is typing.Union or type(ann).__name__ == "UnionType":
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1:
            return {**widget_for(args[0], default), "optional": True, **extra}
    if origin is typing.Literal:
        return {"widget": "choices", "choices": [_plain(a) for a in typing.get_args(ann)], **extra}
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        return {"widget": "choices", "choices": [m.name for m in ann], **extra}
    if ann in _SCALARS:
        return {"widget": _SCALARS[ann], **extra}
    name = getattr(ann, "__name__", str(ann))
    if name == "Tensor" or "Tensor" in str(ann):
        return {"widget": "tensor", **extra}
    if ann is inspect.Parameter.empty and default is not inspect.Parameter.empty:
        for tp, widget in _SCALARS.items():
            if type(default) is tp:
                return {"widget": widget, **extra}
    return {"widget": "other", **extra}


def _annotation_text(ann: Any) -> str | None:
    unpack = getattr(typing, "Unpack", None)  # Python 3.11+: on 3.10 no annotation is an Unpack
    if ann is inspect.Parameter.empty or (unpack is not None and typing.get_origin(ann) is unpack):
        return None
    if isinstance(ann, type):
        return ann.__qualname__
    return str(ann).replace("typing.", "")


def describe_params(func: Any, *, skip_self: bool = False) -> list[dict[str, Any]]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: fall back to the raw annotations
        hints = {}
    out = []
    params = list(sig.parameters.values())
    if skip_self and params and params[0].name == "self":
        params = params[1:]
    for p in params:
        ann = hints.get(p.name, p.annotation)
        if p.kind is p.VAR_KEYWORD:
            ann = inspect.Parameter.empty  # **kwargs: Unpack[TypedDict] says nothing a form can use
        entry = {
            "name": p.name,
            "kind": _KINDS[p.kind],
            "annotation": _annotation_text(ann),
            "has_default": p.default is not inspect.Parameter.empty,
            "default": None if p.default is inspect.Parameter.empty else _plain(p.default),
        }
        entry.update(widget_for(ann, p.default))
        out.append(entry)
    return out


def kind_of(obj: Any) -> str:
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        return "function"
    return "instance"


def forward_of(obj: Any) -> Any:
    """What gets called with the inputs: a module's ``forward``, a function itself, or ``__call__``."""
    forward = getattr(obj, "forward", None)
    if forward is not None and callable(forward):
        return forward
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return obj
    return getattr(obj, "__call__", obj)  # noqa: B004 - the bound __call__ itself is wanted here


def format_params(params: list[dict[str, Any]]) -> str:
    """``(x: Tensor, alpha: float = 0.5)`` from described parameters."""
    parts = []
    for p in params:
        text = p["name"]
        if p["kind"] == "*args":
            text = "*" + text
        elif p["kind"] == "**kwargs":
            text = "**" + text
        if p["annotation"]:
            text += f": {p['annotation']}"
        if p["has_default"]:
            text += f" = {p['default']!r}"
        parts.append(text)
    return "(" + ", ".join(parts) + ")"
