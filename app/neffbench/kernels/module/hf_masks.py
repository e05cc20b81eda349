"""transformers 4.5x's attention masks built by broadcasting instead of ``torch.vmap`` (self-contained:
``reproduce.py`` carries this file verbatim; see hf_compat.py for why and when)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any


def vmap_masking_utils() -> Any:
    """transformers' ``masking_utils`` when it is the 4.5x one that builds masks with vmap, else None."""
    module = sys.modules.get("transformers.masking_utils")
    if module is None or not hasattr(module, "_vmap_for_bhqkv") or not hasattr(module, "TransformGetItemToIndex"):
        return None
    return module


def _broadcast_for_bhqkv(mask_function: Any, bh_indices: bool = True) -> Any:
    """What ``masking_utils._vmap_for_bhqkv`` returns, made by broadcasting the index tensors instead."""

    def expanded(batch_idx: Any, head_idx: Any, q_idx: Any, kv_idx: Any) -> Any:
        shape: tuple[int, ...]
        if bh_indices:
            shape = (batch_idx.shape[0], head_idx.shape[0], q_idx.shape[0], kv_idx.shape[0])
            mask = mask_function(
                batch_idx[:, None, None, None],
                head_idx[None, :, None, None],
                q_idx[None, None, :, None],
                kv_idx[None, None, None, :],
            )
        else:
            shape = (q_idx.shape[0], kv_idx.shape[0])
            mask = mask_function(None, None, q_idx[:, None], kv_idx[None, :])
        return mask.expand(shape)

    return expanded


def masks_without_vmap() -> bool:
    """Make transformers 4.5x build its masks by broadcasting; True when this call changed something."""
    module = vmap_masking_utils()
    if module is None or module._vmap_for_bhqkv is _broadcast_for_bhqkv:
        return False
    module._vmap_for_bhqkv = _broadcast_for_bhqkv
    # The mode only turns vmap's scalar-tensor indexing into index ops; broadcast indices need nothing,
    # and under torch.jit.trace the mode itself fails ("Unsupported value kind: Tensor").
    module.TransformGetItemToIndex = contextlib.nullcontext
    return True
