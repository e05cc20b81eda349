"""The tapped variant of a module: its own outputs, then every tap's output, as one flat tuple of tensors.

The taps are caught by forward hooks registered for the length of one call, so the module itself is left
as it was (no hooks remain on the user's module) and ``torch.jit.trace`` of the wrapper records the tapped
tensors as graph outputs. The module is wrapped, not copied: same parameters, same buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from neffbench.kernels.module.outputs import leaves
from neffbench.taps.select import Tap, first_tensor, root_of


class TapsError(RuntimeError):
    """The tapped module cannot return what it should (a tap not called, an output that is no tensor)."""


def flat_outputs(raw: Any) -> tuple[torch.Tensor, ...]:
    """A module's outputs as the module kernel's wrapper returns them: every tensor leaf, in order."""
    found = leaves(raw)
    if found.errors:
        raise TapsError(found.errors[0])
    out = []
    for path in found.paths:
        value = raw
        for part in path:
            value = value[part]
        out.append(value)
    return tuple(out)


class Tapped(torch.nn.Module):
    """``module``'s flat outputs followed by one output per tap, in the order of ``taps``."""

    def __init__(self, module: torch.nn.Module, taps: Sequence[Tap]) -> None:
        super().__init__()
        self.module = module
        self.taps = list(taps)
        root = root_of(module)
        for tap in self.taps:
            try:
                root.get_submodule(tap.module)
            except AttributeError:
                raise TapsError(f"{tap.name} names {tap.module!r}, which the module does not have.") from None

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        root = root_of(self.module)
        caught: dict[str, torch.Tensor] = {}
        handles = []

        def catcher(name: str) -> Any:
            def hook(mod: Any, args: Any, output: Any) -> None:
                if name not in caught:  # a module called twice is tapped at its first call
                    _, tensor = first_tensor(output)
                    if tensor is not None:
                        caught[name] = tensor

            return hook

        for tap in self.taps:
            handles.append(root.get_submodule(tap.module).register_forward_hook(catcher(tap.name)))
        try:
            raw = self.module(*inputs)
        finally:
            for handle in handles:
                handle.remove()
        missing = [f"{t.name} ({t.module})" for t in self.taps if t.name not in caught]
        if missing:
            raise TapsError(f"these taps' modules were not called or returned no tensor: {', '.join(missing)}.")
        return flat_outputs(raw) + tuple(caught[t.name] for t in self.taps)

    def split(self, result: Sequence[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(the module's own outputs, each tap's output by tap name) of one result of this wrapper."""
        result = tuple(result)
        cut = len(result) - len(self.taps)
        return result[:cut], {t.name: v for t, v in zip(self.taps, result[cut:])}
