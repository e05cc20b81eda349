"""The RoPE kernel: vLLM's rotary position embedding forward pass, its cos/sin table and its parameters.

``neffbench.kernels.rope`` keeps the names it had as a single module (``rope_forward``,
``build_cos_sin_cache``, ``RopeModule``, ...), so code written against it keeps working. They are
loaded on first use: the registry imports this package to list the kernel, and that must not
import torch.
"""

from __future__ import annotations

from typing import Any

_OPS = ("SCALING_KEYS", "TORCH_DTYPES", "Frequencies", "RopeModule", "build_cos_sin_cache", "frequencies",
        "rope_forward")
__all__ = list(_OPS)


def __getattr__(name: str) -> Any:
    if name in _OPS:
        from neffbench.kernels.rope import ops

        return getattr(ops, name)
    raise AttributeError(f"module 'neffbench.kernels.rope' has no attribute {name!r}")
