"""Which intermediate outputs of a module to tap: its submodules in execution order, by depth or by path pattern.

One eager run under forward hooks records every submodule that ``forward`` calls: the order they finish in
(a module's output exists once it has finished, so a block's children come before the block), the first
tensor each returns, and the source of its class's ``forward``. Depth counts *called* modules only: a
``ModuleList`` that is indexed but never called is no level of its own, so ``encoder.layer.0`` of a BERT is
at depth 2, under ``encoder``.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from neffbench.kernels.module import wrapper as module_wrapper
from neffbench.kernels.module.outputs import Leaves, collect, name_of
from neffbench.usercode.origin import is_user_file
from neffbench.usercode.tensors import describe

MAX_TAPS = 64  # the default depth is the deepest whose taps are at most this many


class TapSelectionError(ValueError):
    """A tap selection that cannot be made (a pattern that matches nothing); one sentence naming it."""


@dataclass(frozen=True)
class Tap:
    """One intermediate output the tapped module returns.

    ``name`` is its output name (``tap0``..), ``module`` its path as in ``named_modules()`` of the user's
    module (``(output i)`` at depth 0: the module's own output i, for a module without submodules), ``source``
    ``FILE:LINE`` of its class's ``forward`` (None when Python cannot tell), ``part`` which tensor of the module's
    output it is (``output`` for a tensor, ``output[0]`` for a tuple's first). ``called_at`` is, for a module of a
    library's class (an ``nn.Linear``), the line of the user's own code that called it: the line a user knows.
    """

    name: str
    module: str
    cls: str
    source: str | None
    dtype: str
    shape: tuple[int, ...]
    depth: int = 1
    calls: int = 1
    part: str = "output"
    called_at: str | None = None

    @property
    def where(self) -> str | None:
        """The line to show for the tap: the user's call of a library module, else its class's ``forward``."""
        return self.called_at or self.source

    def to_dict(self) -> dict[str, Any]:
        """As records and reports write it (``class`` for ``cls``)."""
        return {
            "name": self.name,
            "module": self.module,
            "class": self.cls,
            "source": self.source,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "depth": self.depth,
            "calls": self.calls,
            "part": self.part,
            "called_at": self.called_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tap:
        """A tap as :meth:`to_dict` wrote it (a tapped job's record); missing counts read as 1."""
        return cls(
            str(data["name"]),
            str(data["module"]),
            str(data.get("class") or ""),
            data.get("source"),
            str(data.get("dtype") or ""),
            tuple(data.get("shape") or ()),
            depth=int(data["depth"]) if isinstance(data.get("depth"), int) else 1,  # 0: the module's own output
            calls=int(data.get("calls") or 1),
            part=str(data.get("part") or "output"),
            called_at=data.get("called_at"),
        )


@dataclass
class TapPlan:
    taps: list[Tap]
    depth: int | None  # the depth limit used; None when patterns alone chose
    notes: list[str] = field(default_factory=list)


@dataclass
class _Call:
    path: str
    cls: str
    source: str | None
    depth: int
    calls: int = 1
    part: str | None = None  # None: the output holds no tensor
    dtype: str = ""
    shape: tuple[int, ...] = ()
    unusual: str | None = None  # what the first tensor is when not a plain dense one ("a sparse_coo tensor")
    called_at: str | None = None


def root_of(module: Any) -> Any:
    """The module whose ``named_modules()`` the tap paths are: the user's, inside the module kernel's wrapper."""
    import torch

    inner = getattr(module, "inner", None)
    if type(module).__name__ == module_wrapper.CLASS_NAME and isinstance(inner, torch.nn.Module):
        return inner
    return module


def unusual_tensors(module: Any) -> list[tuple[str, str, str]]:
    """(``parameter``/``buffer``, name, what it is) of each parameter and buffer of the user's module that is not a
    plain dense tensor (``neffbench.usercode.tensors.describe``), named as the user's ``named_buffers()`` names it."""
    root = root_of(module)
    found = [("parameter", n, t) for n, t in root.named_parameters()]
    found += [("buffer", n, t) for n, t in root.named_buffers() if t is not None]
    return [(role, name, what) for role, name, t in found if (what := describe(t)) is not None]


def first_tensor(value: Any) -> tuple[str, Any] | tuple[None, None]:
    """(name, tensor) of the first tensor leaf of a module's output, as the module kernel orders leaves."""
    found = Leaves()
    collect(value, (), found)
    if not found.paths:
        return None, None
    path = found.paths[0]
    for part in path:
        value = value[part]
    return name_of(path), value


def source_of(cls: Any) -> str | None:
    """``FILE:LINE`` of ``cls.forward``; None for classes defined where Python keeps no source."""
    try:
        # unwrap: a decorated forward (transformers' deprecation wrappers) is reported where the decorator lives
        forward = inspect.unwrap(cls.forward)
        file = inspect.getsourcefile(forward)
        _, line = inspect.getsourcelines(forward)
    except (AttributeError, TypeError, OSError, ValueError):
        return None
    return f"{file}:{line}" if file else None


def _is_users(file: str | None, seen: dict[str, bool]) -> bool:
    if not file or file.startswith("<"):
        return False  # generated code (the module kernel's wrapper), a string compiled at run time
    if file not in seen:
        seen[file] = is_user_file(file)
    return seen[file]


def users_call(seen: dict[str, bool], stop: FrameType | None = None) -> str | None:
    """``FILE:LINE`` of the innermost frame of the running call stack that is the user's own code (called from a
    module's forward hook itself: the frames above the hook's caller are searched, up to ``stop`` when given)."""
    frame: FrameType | None = sys._getframe(2)  # the hook's caller: torch's call machinery, then the module's
    while frame is not None and frame is not stop:
        if _is_users(frame.f_code.co_filename, seen):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def record_calls(module: Any, inputs: Sequence[Any]) -> list[_Call]:
    """Run ``module(*inputs)`` once and return its submodules' first calls in the order they finished."""
    import torch

    root = root_of(module)
    names = {id(m): path for path, m in root.named_modules() if path}
    stack: list[str] = []  # paths of the called modules running now, to know each call's depth
    calls: dict[str, _Call] = {}
    sources: dict[type, str | None] = {}  # the twelve layers of a model share one class
    seen: dict[str, bool] = {}  # whether a file is the user's, by path

    def before(mod: Any, args: Any) -> None:
        path = names[id(mod)]
        if path in calls:
            calls[path].calls += 1
        else:
            cls = type(mod)
            if cls not in sources:
                sources[cls] = source_of(cls)
            source = sources[cls]
            library = source is None or not _is_users(source.rpartition(":")[0], seen)
            calls[path] = _Call(
                path, cls.__name__, source, depth=len(stack) + 1, called_at=users_call(seen) if library else None
            )
        stack.append(path)

    def after(mod: Any, args: Any, output: Any) -> None:
        path = stack.pop()
        call = calls[path]
        if call.calls == 1:
            part, tensor = first_tensor(output)
            if part is not None and tensor is not None:
                call.part, call.dtype, call.unusual = part, str(tensor.dtype).replace("torch.", ""), describe(tensor)
                call.shape = tuple(tensor.shape) if call.unusual is None else ()
            order.append(path)

    order: list[str] = []
    handles = []
    for path, mod in root.named_modules():
        if path:
            handles += [mod.register_forward_pre_hook(before), mod.register_forward_hook(after)]
    try:
        with torch.no_grad():
            module(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    return [calls[path] for path in order]


def _regex(pattern: str) -> re.Pattern[str]:
    """``*`` is one path segment's worth (no dots), ``**`` any number of segments; a pattern also matches the
    tail of a path, so ``layers.*.mlp`` finds ``model.layers.0.mlp``."""
    parts = []
    for token in re.split(r"(\*\*|\*|\?)", pattern):
        parts.append({"**": ".*", "*": "[^.]*", "?": "[^.]"}.get(token, re.escape(token)))
    return re.compile(r"(?:.*\.)?" + "".join(parts))


def _matching(calls: list[_Call], patterns: Sequence[str], every_path: list[str]) -> list[_Call]:
    chosen: set[str] = set()
    for pattern in patterns:
        regex = _regex(pattern)
        hits = {c.path for c in calls if regex.fullmatch(c.path)}
        if not hits:
            uncalled = [p for p in every_path if regex.fullmatch(p)]
            if uncalled:
                raise TapSelectionError(
                    f"tap pattern '{pattern}' matches only modules that forward never calls "
                    f"({', '.join(uncalled[:3])}): tap what they contain, e.g. '{uncalled[0]}.*'."
                )
            raise TapSelectionError(
                f"tap pattern '{pattern}' matches no module; module paths look like "
                f"{', '.join(c.path for c in calls[:3]) or '(the module has no submodules)'}."
            )
        chosen |= hits
    return [c for c in calls if c.path in chosen]


def _default_depth(calls: list[_Call], limit: int) -> int:
    deepest = max((c.depth for c in calls), default=0)
    best = 1 if calls else 0
    for depth in range(1, deepest + 1):
        if sum(1 for c in calls if c.depth <= depth) <= limit:
            best = depth
    return best


def plan(
    module: Any,
    inputs: Sequence[Any],
    patterns: Sequence[str] = (),
    depth: int | None = None,
    max_taps: int = MAX_TAPS,
) -> TapPlan:
    """The taps of ``module`` on ``inputs``: submodules matching ``patterns`` (any, when none are given) at
    depth ``depth`` or shallower (by default the deepest depth with at most ``max_taps`` taps)."""
    calls = record_calls(module, inputs)
    every_path = [p for p, _ in root_of(module).named_modules() if p]
    notes: list[str] = []
    chosen = _matching(calls, patterns, every_path) if patterns else calls
    if depth is None and not patterns and calls:
        depth = _default_depth(calls, max_taps)
        deepest = max((c.depth for c in calls), default=0)
        notes.append(
            f"taps: every module down to depth {depth} of {deepest} ({sum(c.depth <= depth for c in calls)} taps, "
            f"at most {max_taps} by default); choose others with a depth or with module-path patterns "
            "such as 'layers.*.mlp'."
        )
    if depth is not None:
        kept = [c for c in chosen if c.depth <= depth]
        if patterns and not kept:
            raise TapSelectionError(
                f"tap patterns {', '.join(repr(p) for p in patterns)} match modules deeper than depth {depth} only "
                f"(the shallowest is at depth {min(c.depth for c in chosen)})."
            )
        chosen = kept
    taps: list[Tap] = []
    for call in chosen:
        if call.part is None:
            notes.append(f"{call.path} ({call.cls}) returns no tensor, so it is not tapped.")
            continue
        if call.unusual is not None:
            notes.append(
                f"{call.path} ({call.cls}) returns {call.unusual}, which a NEFF cannot return, so it is not tapped."
            )
            continue
        if call.calls > 1:
            notes.append(f"{call.path} is called {call.calls} times; its tap is the output of the first call.")
        taps.append(
            Tap(
                f"tap{len(taps)}", call.path, call.cls, call.source, call.dtype, call.shape,
                depth=call.depth, calls=call.calls, part=call.part, called_at=call.called_at,
            )
        )  # fmt: skip
    if not calls:
        taps = _own_outputs(module, inputs)
        notes.append("the module calls no submodule, so its own outputs are the taps (depth 0).")
    return TapPlan(taps, depth, notes)


def _own_outputs(module: Any, inputs: Sequence[Any]) -> list[Tap]:
    """A module without submodules (a fused kernel) is tapped at its outputs: depth 0, ``(output i)``, still
    compared with eager and float64."""
    import torch

    with torch.no_grad():
        raw = module(*inputs)
    found = Leaves()
    collect(raw, (), found)
    cls = type(root_of(module))
    source = source_of(cls)
    taps = []
    for i, path in enumerate(found.paths):
        value = raw
        for part in path:
            value = value[part]
        dtype, shape = str(value.dtype).replace("torch.", ""), tuple(value.shape)
        taps.append(Tap(f"tap{i}", f"(output {i})", cls.__name__, source, dtype, shape, depth=0, part=f"output[{i}]"))
    return taps
