"""What a forward call does besides returning its outputs: writes into the module's parameters and buffers or into
its inputs, buffers it replaces, and random draws (torch; worker and probe only).

A traced graph keeps none of these: a NEFF holds the module's tensors as constants and returns only its outputs,
so a written buffer is the value it had when traced on every call, a written input is never seen by the caller,
and a random draw is made once. Writes are found by the tensors' version counters (so a write of the value already
there counts too) and placed in the user's code by a TorchFunctionMode watching the one eager call the job makes
anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from neffbench.usercode.origin import call_stack, user_line

# Torch calls that draw random numbers whatever their arguments, and the ones that do only in training mode.
_RANDOM = frozenset(
    {
        "rand",
        "randn",
        "randint",
        "randperm",
        "rand_like",
        "randn_like",
        "randint_like",
        "bernoulli",
        "bernoulli_",
        "multinomial",
        "normal",
        "normal_",
        "uniform_",
        "exponential_",
        "geometric_",
        "cauchy_",
        "log_normal_",
        "random_",
        "poisson",
    }
)
_RANDOM_IN_TRAINING = {  # name: the position of its ``training`` argument
    "dropout": 2,
    "dropout1d": 2,
    "dropout2d": 2,
    "dropout3d": 2,
    "alpha_dropout": 2,
    "feature_alpha_dropout": 2,
    "rrelu": 3,
}
_INPLACE_DUNDERS = frozenset(
    {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__"}
    | {"__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imatmul__"}
)


def op_name(func: Any) -> str:
    """``Tensor.mul``, ``torch.view_as_complex``, ``F.dropout``: a torch function as a sentence names it."""
    try:
        name = resolve_name(func) or getattr(func, "__name__", repr(func))
    except Exception:  # noqa: BLE001 - a name is only for the sentence
        name = getattr(func, "__name__", repr(func))
    name = name.removesuffix(".__get__").replace("torch.Tensor.", "Tensor.").replace("torch.nn.functional.", "F.")
    return name


@dataclass(frozen=True)
class Write:
    """One tensor a call wrote into: ``kind`` is "parameter", "buffer" or "input"."""

    kind: str
    name: str
    op: str  # the first torch call seen writing it: Tensor.__setitem__, Tensor.copy_, torch.add (out=)
    where: str  # model.py:41, or "" when no frame of the call was the user's


@dataclass
class Effects:
    """What one call did besides returning: each written tensor once, replaced buffers, random draws (op, where)."""

    writes: list[Write] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    random: list[tuple[str, str]] = field(default_factory=list)

    def state_writes(self) -> list[Write]:
        return [w for w in self.writes if w.kind != "input"]

    def input_writes(self) -> list[Write]:
        return [w for w in self.writes if w.kind == "input"]


def _storage(tensor: Any) -> int | None:
    """The address of a tensor's storage (views share it); None for tensors without one (sparse, meta)."""
    if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided or tensor.is_meta:
        return None
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # tensor subclasses without a storage of their own
        return None


def _targets(name: str, args: tuple, kwargs: dict) -> list[Any]:
    """The tensors a call writes into: the first argument of an in-place call, ``out=``, ``inplace=True``."""
    out = kwargs.get("out")
    found = list(out) if isinstance(out, (tuple, list)) else [out] if out is not None else []
    inplace = name in _INPLACE_DUNDERS or (name.endswith("_") and not name.endswith("__")) or kwargs.get("inplace")
    if inplace and args:
        found.append(args[0])
    return found


def _draws(name: str, args: tuple, kwargs: dict) -> bool:
    if name in _RANDOM:
        return True
    if name in _RANDOM_IN_TRAINING:
        position = _RANDOM_IN_TRAINING[name]
        training = kwargs.get("training", args[position] if len(args) > position else name != "rrelu")
        probability = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
        return bool(training) and not (isinstance(probability, (int, float)) and probability == 0)
    return False


class _Watch(TorchFunctionMode):
    def __init__(self, watched: dict[int, tuple[str, str]]) -> None:
        super().__init__()
        self.watched = watched  # storage address: (kind, name)
        self.places: dict[tuple[str, str], tuple[str, str]] = {}  # (kind, name): (op, where), first write only
        self.random: dict[tuple[str, str], None] = {}

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        for target in _targets(name, args, kwargs):
            owner = self.watched.get(_storage(target) or 0)
            if owner is not None and owner not in self.places:
                self.places[owner] = (op_name(func), user_line())
        if _draws(name, args, kwargs):
            self.random.setdefault((op_name(func), user_line()), None)
        return func(*args, **kwargs)


def named_state(module: Any, prefix: str = "") -> list[tuple[str, str, Any]]:
    """(kind, name, tensor) of a module's parameters and buffers, names without ``prefix`` (a wrapper's ``inner.``)."""
    if not isinstance(module, torch.nn.Module):
        return []
    found: list[tuple[str, str, Any]] = [
        ("parameter", n, t) for n, t in module.named_parameters(remove_duplicate=False)
    ]
    found += [("buffer", n, t) for n, t in module.named_buffers(remove_duplicate=False) if t is not None]
    return [(kind, n.removeprefix(prefix), t) for kind, n, t in found]


def _version(tensor: Any) -> int | None:
    try:
        return int(tensor._version)
    except (AttributeError, RuntimeError):  # tensors without a version counter (some subclasses)
        return None


@contextmanager
def watching(module: Any, inputs: dict[str, Any], prefix: str = "") -> Iterator[Effects]:
    """``with watching(module, {"x": x}) as found: module(x)``: ``found`` holds what the call did, once it is over."""
    state = named_state(module, prefix)
    watched = {s: (kind, name) for kind, name, t in state if (s := _storage(t)) is not None}
    watched.update({s: ("input", name) for name, t in inputs.items() if (s := _storage(t)) is not None})
    before = {(kind, name): (_version(t), id(t)) for kind, name, t in state}
    before.update({("input", name): (_version(t), id(t)) for name, t in inputs.items()})
    effects = Effects()
    mode = _Watch(watched)
    with mode:
        yield effects
    now = {(kind, name): t for kind, name, t in named_state(module, prefix)}
    now.update({("input", name): t for name, t in inputs.items()})
    for key, (version, ident) in before.items():
        tensor = now.get(key)
        if tensor is None:
            continue
        if id(tensor) != ident:
            effects.replaced.append(key[1])
        elif version is not None and _version(tensor) != version:
            op, where = mode.places.get(key, ("an in-place operation", ""))
            effects.writes.append(Write(key[0], key[1], op, where))
    effects.random = list(mode.random)


@contextmanager
def undone(module: Any, inputs: tuple[Any, ...]) -> Iterator[None]:
    """Whatever the block writes into the module's buffers and untrained parameters, or into ``inputs``, is put
    back afterwards: a call made only to learn what the module returns must leave it and its inputs as they were
    (a KV cache filled by it would otherwise be baked into the NEFF as the example's keys and values)."""
    kept = [(t, _version(t), t.detach().clone()) for _, _, t in named_state(module) if _restorable(t)]
    kept += [(t, _version(t), t.detach().clone()) for t in inputs if _restorable(t)]
    try:
        yield
    finally:
        with torch.no_grad():
            for tensor, version, copy in kept:
                if _version(tensor) != version:
                    tensor.copy_(copy)


def _restorable(tensor: Any) -> bool:
    # Trained weights are not copied (a model's worth of memory): a forward writing one is refused anyway.
    return _storage(tensor) is not None and not (isinstance(tensor, torch.nn.Parameter) and tensor.requires_grad)


_EMPTY = frozenset({"empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided"})


class _Allocations(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        # Storage address: the call stack that allocated it, judged (which frame is the user's) only for the few
        # tensors found never written: a model's constructor allocates every weight with torch.empty.
        self.sites: dict[int, tuple[tuple[str, int], ...]] = {}

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") in _EMPTY and (address := _storage(out)) is not None:
            self.sites.setdefault(address, call_stack())
        return out


@contextmanager
def marking_uninitialised() -> Iterator[dict[int, tuple[tuple[str, int], ...]]]:
    """While the block builds a module, memory torch allocates without initialising it (``torch.empty``) is filled
    with NaN (integers: their largest value) instead of whatever it held, and where the user's code allocated each
    such tensor is noted: :func:`uninitialised` then finds the parameters and buffers nothing ever wrote."""
    import torch.utils.deterministic

    flags: Any = torch.utils.deterministic  # its attribute is set through a module-level property mypy cannot see
    deterministic, warn_only = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    fill = flags.fill_uninitialized_memory
    # warn_only: operations without a deterministic implementation must not fail the user's constructor.
    _set_deterministic(True, warn_only=True)
    flags.fill_uninitialized_memory = True
    mode = _Allocations()
    try:
        with mode:
            yield mode.sites
    finally:
        flags.fill_uninitialized_memory = fill
        _set_deterministic(deterministic, warn_only=warn_only)


def _set_deterministic(mode: bool, *, warn_only: bool) -> None:
    """``torch.use_deterministic_algorithms`` for the ATen operations a constructor runs. The public function also
    imports ``torch._inductor`` to set its config, which pulls in dynamo and sympy: about 2 CPU-seconds in every
    build of user code, for a compiler the build does not use; its ``_C`` setter is what it calls for ATen."""
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # a torch without it: the public function, at its price
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)


def _never_written(tensor: Any) -> bool:
    if _storage(tensor) is None or tensor.numel() == 0:
        return False
    with torch.no_grad():
        if tensor.is_floating_point() or tensor.is_complex():
            return bool(torch.isnan(tensor).all())
        if tensor.dtype == torch.bool:
            return False
        return bool((tensor == torch.iinfo(tensor.dtype).max).all())


def uninitialised(
    module: Any, sites: dict[int, tuple[tuple[str, int], ...]], prefix: str = ""
) -> list[tuple[str, str, str]]:
    """(kind, name, where allocated) of each parameter and buffer still holding the fill of
    :func:`marking_uninitialised`, each set to zeros: its values were never chosen, and zeros at least are the same
    in every build, run and compare."""
    found = []
    for kind, name, tensor in named_state(module, prefix):
        if _never_written(tensor):
            stack = sites.get(_storage(tensor) or 0)
            found.append((kind, name, user_line(stack) if stack else ""))
            with torch.no_grad():
                tensor.zero_()
    return found
