"""(torch) The FLOPs of an eager call, counted as torch's ``FlopCounterMode`` counts them, without importing dynamo.

Since torch 2.10 every ``TorchDispatchMode`` subclass has its ``__torch_dispatch__`` wrapped to keep dynamo out of
it, and the wrapper imports ``torch._dynamo`` (with ``torch.distributed``) on the first operation it sees: about
1.5 CPU-seconds in every compile worker, for a compiler the structure never uses. This mode counts with torch's own
formulas (``torch.utils.flop_counter.flop_registry``) and decomposes what has none, as ``FlopCounterMode`` does; it
only ever runs eagerly, so it opts out of that wrapping.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

# Queries of a tensor's layout, which FlopCounterMode leaves to the next mode; looked up by name, since the set
# of these operators differs between torch versions.
_METADATA = (
    "sym_is_contiguous.default",
    "is_contiguous.default",
    "is_contiguous.memory_format",
    "is_strides_like_format.default",
    "is_non_overlapping_and_dense.default",
    "size.default",
    "sym_size.default",
    "stride.default",
    "sym_stride.default",
    "storage_offset.default",
    "sym_storage_offset.default",
    "numel.default",
    "sym_numel.default",
    "dim.default",
)


def _operator(name: str) -> Any:
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet, None), overload, None)


class FlopCounter(TorchDispatchMode):
    """``with FlopCounter() as counter: ...`` then ``counter.get_total_flops()``, as with ``FlopCounterMode``."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:  # see the module's docstring: this mode never runs under dynamo
        return False

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self._metadata = {op for op in map(_operator, _METADATA) if op is not None} | {torch.ops.prim.layout.default}

    def get_total_flops(self) -> int:
        return self.total

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in self._metadata:
            return NotImplemented
        # As FlopCounterMode: an operator is first offered its decomposition (the registry's keys are packets, so
        # an overload is never among them), and counted by its packet's formula when it has none.
        if func not in flop_registry and func is not torch.ops.prim.device.default:
            with self:
                decomposed = func.decompose(*args, **kwargs)
            if decomposed is not NotImplemented:
                return decomposed
        out = func(*args, **kwargs)
        formula = flop_registry.get(func._overloadpacket)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=out)
        return out
