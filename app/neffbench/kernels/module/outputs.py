"""A module's outputs as tensor leaves: where each is (its access path), what it is called, and what cannot be traced.

A traced graph returns tensors (or nested tuples, lists and dicts of them); ``None``, caches and
Python scalars in the outputs fail the trace. The workbench returns the tensor leaves as a flat
tuple, in a recorded order, and names every leaf it cannot return.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Path = tuple[Any, ...]  # int for a sequence index, str for a mapping key


@dataclass
class Leaves:
    paths: list[Path] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def name_of(path: Path) -> str:
    """``last_hidden_state``, ``output[1]``, ``hidden_states[2]``: how a leaf reads to a user."""
    if not path:
        return "output"
    head, rest = path[0], path[1:]
    text = head if isinstance(head, str) else f"output[{head}]"
    for part in rest:
        text += f"[{part!r}]" if isinstance(part, str) else f"[{part}]"
    return text


def access(path: Path, var: str = "out") -> str:
    """The Python expression that reaches the leaf: ``out[0]``, ``out["logits"]``."""
    return var + "".join(f"[{p!r}]" for p in path)


def reach(raw: Any, path: Path) -> Any:
    """The leaf at ``path`` of what the module returned (the value ``access`` reaches in the wrapper)."""
    for part in path:
        raw = raw[part]
    return raw


def _is_mapping(value: Any) -> bool:
    # ModelOutput is an OrderedDict subclass; other dict-likes are Mappings.
    return isinstance(value, Mapping)


def _describe(value: Any) -> str:
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def collect(value: Any, path: Path, out: Leaves) -> None:
    import torch

    if isinstance(value, torch.Tensor):
        out.paths.append(path)
        return
    name = name_of(path)
    if value is None:
        out.errors.append(
            f"{name} is None: a traced graph returns tensors only (pick the outputs you need "
            "with [module] outputs, or pass a constant that turns this output off)."
        )
    elif _is_mapping(value):
        for key, item in value.items():
            collect(item, (*path, key), out)
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            collect(item, (*path, i), out)
    elif "Cache" in type(value).__name__:
        out.errors.append(
            f"{name} is {_describe(value)}: pass use_cache=False as a constant ([module.constants] use_cache = false)."
        )
    elif isinstance(value, (bool, int, float, complex, str)):
        out.errors.append(
            f"{name} is {_describe(value)} ({value!r}), not a tensor: a traced graph returns tensors only."
        )
    else:
        out.errors.append(f"{name} is {_describe(value)}, not a tensor: a traced graph returns tensors only.")


def _pick(raw: Any, key: str) -> tuple[Path, Any]:
    """One of [module] outputs: a dict key or ModelOutput field, or a tuple index."""
    if _is_mapping(raw):
        if key in raw:
            return (key,), raw[key]
        raise KeyError(
            f"outputs names '{key}', which the module does not return (it returns: {', '.join(map(str, raw.keys()))})."
        )
    if isinstance(raw, (tuple, list)):
        try:
            index = int(key)
        except ValueError:
            raise KeyError(
                f"outputs names '{key}', but the module returns a {type(raw).__name__} of "
                f"{len(raw)}: pick by index (0..{len(raw) - 1})."
            ) from None
        if not -len(raw) <= index < len(raw):
            raise KeyError(f"outputs names index {index}, but the module returns {len(raw)} output(s).")
        return (index,), raw[index]
    raise KeyError(f"outputs names '{key}', but the module returns a single {type(raw).__name__}.")


def leaves(raw: Any, picks: tuple[str, ...] = ()) -> Leaves:
    """Every tensor leaf of ``raw`` (or of the picked outputs, in the order picked) and what is wrong."""
    out = Leaves()
    if not picks:
        collect(raw, (), out)
    else:
        for key in picks:
            try:
                path, value = _pick(raw, key)
            except KeyError as exc:
                out.errors.append(exc.args[0])
                continue
            collect(value, path, out)
    if not out.paths and not out.errors:
        out.errors.append("the module returns no tensor at all: a NEFF needs at least one tensor output.")
    return out
