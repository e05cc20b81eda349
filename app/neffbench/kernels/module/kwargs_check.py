"""Keyword arguments that name nothing, caught before the call swallows them (torch-free; runs the user's code).

A class whose ``__init__`` takes ``**kwargs`` accepts any key: a Hugging Face config keeps a misspelt
``hidden_sise = 32`` as an attribute of its own and builds the default model, so a sweep over it compiles the
same NEFF under different labels. For such a class the keys it knows are its named parameters and the
attributes a default instance has; for any other callable, its named parameters.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any


def _named_params(obj: Any) -> tuple[set[str], bool] | None:
    """(named keyword parameters, whether it takes **kwargs), or None when there is no readable signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    named = {p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"}
    return named, any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _default_attributes(cls: type) -> set[str] | None:
    """What a default instance of ``cls`` has, or None when it cannot be made without arguments."""
    try:
        instance = cls()
    except Exception:  # noqa: BLE001 - a class with required arguments: nothing to compare against
        return None
    names = set(dir(instance))
    try:
        names |= set(vars(instance))
    except TypeError:
        pass
    names |= set(getattr(cls, "attribute_map", None) or {})  # Hugging Face aliases (n_embd for hidden_size)
    return names


def unknown_keys(obj: Any, keys: list[str]) -> list[str]:
    """One sentence per key that ``obj(**{key: ...})`` would not honour, with a "did you mean" where one is close."""
    found = _named_params(obj)
    if found is None or not keys:
        return []
    named, swallows = found
    known = set(named)
    if inspect.isclass(obj):
        # A class may take more than its signature says (a Hugging Face config's __init__ keeps any key as an
        # attribute, its aliases in attribute_map): what a default instance has is what it knows.
        attributes = _default_attributes(obj)
        if attributes is None:
            if swallows:
                return []  # required arguments and **kwargs: nothing certain to compare against
        else:
            # A private backing attribute counts (attn_implementation is kept as _attn_implementation).
            known |= attributes | {a.lstrip("_") for a in attributes}
    elif swallows:
        return []  # a function's **kwargs may go anywhere
    label = getattr(obj, "__qualname__", type(obj).__name__)
    out = []
    for key in keys:
        if key in known:
            continue
        public = sorted(k for k in known if not k.startswith("_"))
        close = difflib.get_close_matches(key, public, n=1, cutoff=0.75)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        has = (f"{label} takes no parameter '{key}' and a default {label} has no attribute of that name"
               if inspect.isclass(obj) else f"{label} has no parameter '{key}'")
        out.append(f"'{key}' is not something {label} knows: {has}, so the value would be ignored.{hint}")
    return out


def problems(obj: Any, kwargs: dict[str, Any], paths: tuple[str, ...], where: str = "module.kwargs") -> list[
        tuple[str, str]]:
    """(field, sentence) for every key of ``kwargs`` (and of the nested tables with an ``entry``) that its
    callable would not honour: what the form shows after a Resolve. Resolves nested entries (runs user code)."""
    from neffbench.kernels.module import entry as entries

    out = [(where, sentence) for sentence in unknown_keys(obj, list(kwargs))] if obj is not None else []
    for name, value in kwargs.items():
        if not (isinstance(value, dict) and "entry" in value) or value.get("call", "factory") == "object":
            continue
        field = f"{where}.{name}.kwargs"
        try:
            nested = entries.resolve(str(value["entry"]), paths)
        except entries.EntryError as exc:
            out.append((f"{where}.{name}", str(exc)))
            continue
        out += problems(nested, value.get("kwargs") or {}, paths, field)
    return out
