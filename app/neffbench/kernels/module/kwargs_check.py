"""Keyword arguments that name nothing, caught before the call swallows them (torch-free; runs the user's code).

A class that takes any keyword keeps a misspelt ``hidden_sise = 32`` as an attribute of its own (a Hugging Face
config does) and the model is built from the default, so a sweep over it compiles the same NEFF under different
labels. Whether a key was *honoured* is found by trying: the class is made with the key and without it, and a
key that changed nothing but its own attribute was only stored. Such a key is an error when it is close to
something the class knows (a misspelling, with a "did you mean"); otherwise it may be read later by the user's
own code (minGPT's CfgNode, argparse.Namespace, a custom config field), and is a warning only. A callable that
takes no ``**kwargs`` knows its named parameters and nothing else.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Findings:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _named_params(obj: Any) -> tuple[set[str], bool] | None:
    """(named keyword parameters, whether it takes **kwargs), or None when there is no readable signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    named = {
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    }
    return named, any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _attributes(instance: Any) -> dict[str, Any]:
    try:
        return dict(vars(instance))
    except TypeError:
        return {}


def _make(cls: type, kwargs: dict[str, Any]) -> Any:
    try:
        return cls(**kwargs)
    except Exception:  # noqa: BLE001 - a class that will not be made so tells us nothing
        return None


def _only_stored(cls: type, kwargs: dict[str, Any], key: str) -> bool | None:
    """Whether making ``cls`` with ``key`` changes nothing but an attribute named ``key`` (None: cannot tell)."""
    without = _make(cls, {k: v for k, v in kwargs.items() if k != key})
    with_key = _make(cls, kwargs)
    if without is None or with_key is None:
        return None
    a, b = _attributes(without), _attributes(with_key)
    if not a and not b:
        return None
    extra = {k: v for k, v in b.items() if k not in a}
    same = all(_same(a[k], b.get(k)) for k in a)
    return same and set(extra) <= {key}


def _same(x: Any, y: Any) -> bool:
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - values that cannot be compared (tensors): assume they differ
        return False


def _known(cls: type) -> set[str]:
    """What a default instance has, its aliases (Hugging Face's attribute_map) and the public parts of its
    private backing attributes (attn_implementation is kept as _attn_implementation)."""
    instance = _make(cls, {})
    names = set(dir(instance)) | set(_attributes(instance)) if instance is not None else set(dir(cls))
    names |= set(getattr(cls, "attribute_map", None) or {})
    return names | {n.lstrip("_") for n in names}


def check(obj: Any, kwargs: dict[str, Any]) -> Findings:
    """What ``obj(**kwargs)`` would silently not honour; ``kwargs`` are the values it will be called with."""
    out = Findings()
    found = _named_params(obj)
    if found is None or not kwargs:
        return out
    named, swallows = found
    is_class = inspect.isclass(obj)
    if swallows and not is_class:
        return out  # a function's **kwargs may go anywhere
    label = getattr(obj, "__qualname__", type(obj).__name__)
    known: set[str] | None = None
    for key in kwargs:
        if key in named:
            continue
        if is_class and _is_module_class(obj):
            if not swallows:  # Python raises for it anyway; say it with a "did you mean" first
                out.errors.append(_no_parameter(label, key, named))
            continue  # making a model twice to see what a keyword does costs too much: nothing certain to say
        if known is None:
            known = named | (_known(obj) if is_class else set())
        if key in known:
            continue
        public = sorted(k for k in known if not k.startswith("_"))
        close = difflib.get_close_matches(key, public, n=1, cutoff=0.75)
        if not is_class or not _accepts_any(obj, swallows):
            out.errors.append(_no_parameter(label, key, known))
            continue
        stored = _only_stored(obj, kwargs, key)
        if stored is False or stored is None:
            continue  # honoured (it changed the object), or nothing certain to say
        if close:
            out.errors.append(
                f"'{key}' is not something {label} knows: making it with '{key}' only keeps the value "
                f"as an attribute of that name, which nothing of {label} reads, so it would be "
                f"ignored. Did you mean '{close[0]}'?"
            )
        else:
            out.warnings.append(
                f"'{key}' is kept by {label} as an attribute but is not one of its own fields: it "
                "matters only if your code reads it"
            )
    return out


def _no_parameter(label: str, key: str, named: set[str]) -> str:
    close = difflib.get_close_matches(key, sorted(named), n=1, cutoff=0.75)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return f"'{key}' is not something {label} knows: {label} has no parameter '{key}'.{hint}"


def _is_module_class(cls: type) -> bool:
    import sys

    torch = sys.modules.get("torch")
    return torch is not None and issubclass(cls, torch.nn.Module)


def _accepts_any(cls: type, swallows: bool) -> bool:
    """A class that takes any keyword, by its signature or in fact (transformers 5's configs hide theirs)."""
    if swallows:
        return True
    probe = "_neffbench_unlikely_keyword"
    return _make(cls, {probe: 1}) is not None


def unknown_keys(obj: Any, keys: list[str] | dict[str, Any]) -> list[str]:
    """The errors of :func:`check` for these keys (values unknown: each tried as None)."""
    kwargs = keys if isinstance(keys, dict) else {k: None for k in keys}
    return check(obj, kwargs).errors
