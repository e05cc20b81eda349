"""The tapped variant of a module: its own outputs, then every tap's output, as one flat tuple of tensors.

The taps are caught by forward hooks on the tapped submodules, so ``torch.jit.trace`` (and ``torch.compile``)
of the wrapper records the tapped tensors as graph outputs. The module is wrapped, not copied: same
parameters, same buffers; ``remove()`` takes the hooks off it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from neffbench.kernels.module.outputs import leaves
from neffbench.taps.select import Tap, first_tensor, root_of


class TappedModuleError(RuntimeError):
    """The tapped module cannot return what it should (a tap not called, an output that is no tensor)."""


def flat_outputs(raw: Any) -> tuple[torch.Tensor, ...]:
    """A module's outputs as the module kernel's wrapper returns them: every tensor leaf, in order."""
    found = leaves(raw)
    if found.errors:
        raise TappedModuleError(found.errors[0])
    out = []
    for path in found.paths:
        value = raw
        for part in path:
            value = value[part]
        out.append(value)
    return tuple(out)


class _Catcher:
    """A forward hook keeping the first tensor a module returns in ``store`` (a module called twice is tapped
    at its first call). An object, not a closure, so that a deep copy of the tapped module catches into the
    copy's store (closures are copied as they are, still pointing at the original's)."""

    def __init__(self, name: str, store: dict[str, torch.Tensor]) -> None:
        self.name, self.store = name, store

    def __call__(self, module: Any, args: Any, output: Any) -> None:
        if self.name not in self.store:
            _, tensor = first_tensor(output)
            if tensor is not None:
                self.store[self.name] = tensor


class Tapped(torch.nn.Module):
    """``module``'s flat outputs followed by one output per tap, in the order of ``taps``.

    The hooks stay on the module's submodules until ``remove()`` (or the end of a ``with`` block): a hook
    added and removed inside ``forward`` would be fine for ``torch.jit.trace`` but is a graph break for
    ``torch.compile``, which TorchNeuron compiles with.
    """

    def __init__(self, module: torch.nn.Module, taps: Sequence[Tap]) -> None:
        super().__init__()
        self.module = module
        self.taps = list(taps)
        self._caught: dict[str, torch.Tensor] = {}
        root = root_of(module)
        targets = []
        for tap in self.taps:
            if tap.depth == 0:  # the module's own output: read from its result, no hook
                continue
            try:
                targets.append(root.get_submodule(tap.module))
            except AttributeError:
                raise TappedModuleError(f"{tap.name} names {tap.module!r}, which the module does not have.") from None
        hooked = [t for t in self.taps if t.depth != 0]
        self._handles = [m.register_forward_hook(_Catcher(t.name, self._caught)) for m, t in zip(targets, hooked)]

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        self._caught.clear()
        raw = self.module(*inputs)
        caught = dict(self._caught)
        self._caught.clear()  # hold no tensor of this call past it
        own = flat_outputs(raw)
        for tap in self.taps:
            if tap.depth == 0:
                caught[tap.name] = own[int(tap.part[len("output[") : -1])]
        missing = [f"{t.name} ({t.module})" for t in self.taps if t.name not in caught]
        if missing:
            raise TappedModuleError(f"these taps' modules were not called or returned no tensor: {', '.join(missing)}.")
        return own + tuple(caught[t.name] for t in self.taps)

    def remove(self) -> None:
        """Take the hooks off the module, which is then as it was before it was wrapped."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self) -> Tapped:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def split(self, result: Sequence[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(the module's own outputs, each tap's output by tap name) of one result of this wrapper."""
        result = tuple(result)
        cut = len(result) - len(self.taps)
        return result[:cut], {t.name: v for t, v in zip(self.taps, result[cut:])}
