"""Hugging Face models under transformers 4.5x: attention masks that ``torch.jit.trace`` can trace.

transformers 4.5x builds every sdpa and eager attention mask with ``torch.vmap`` inside dynamo's
``TransformGetItemToIndex`` mode (``masking_utils.sdpa_mask_recent_torch``). A ``torch.jit.trace`` of such
a model (GPT-2, Llama, Mistral, Qwen2 ... : every one built on ``create_causal_mask``) fails there with
``RuntimeError: unordered_map::at`` on every torch, although the model is fine; ``torch_neuronx.trace``
ends in the same trace. Choosing the eager attention does not help (its mask goes through the same code).
transformers 5 builds the same masks by broadcasting the index tensors instead (its default,
``use_vmap=False``), and so does the remedy here: ``masking_utils._vmap_for_bhqkv`` becomes a broadcast
and the index mode a no-op, which gives the same boolean masks (with padding too) as plain tensor ops.

It is applied in the process that builds the module (the worker child, the probe) only when the user's
model needs it and their transformers has that code, and the job's kernel info says so. Importing this
module changes nothing. The change itself is hf_masks.py, self-contained, so ``reproduce.py`` carries it
verbatim.
"""

from __future__ import annotations

import sys
from typing import Any

from neffbench.kernels.module.hf_masks import masks_without_vmap, vmap_masking_utils

WHY = (
    "transformers {version} builds attention masks with torch.vmap, which torch.jit.trace (and so "
    "torch_neuronx.trace) cannot trace (RuntimeError: unordered_map::at); the masks were built by "
    "broadcasting instead, as transformers 5 does, which gives the same masks"
)
# The attention implementations whose masks transformers 4.5x builds with torch.vmap.
VMAP_MASKED = ("sdpa", "eager")


def _masked_implementations(made: Any, masking: Any) -> list[str]:
    """The attention implementations of the transformers models in ``made`` (it or any submodule: a
    wrapper may hold the model) whose code builds its masks with ``masking`` (4.5x's masking_utils)."""
    import torch

    found = set()
    for module in made.modules() if isinstance(made, torch.nn.Module) else []:
        config = getattr(module, "config", None)
        code = sys.modules.get(type(module).__module__)
        if config is None or not hasattr(config, "_attn_implementation") or code is None:
            continue
        if any(getattr(value, "__module__", None) == masking.__name__ for value in vars(code).values()):
            found.add(config._attn_implementation or "eager")
    return sorted(found & set(VMAP_MASKED))


def apply(made: Any, info: dict[str, Any]) -> None:
    """Apply the remedy when ``made`` is (or holds) a transformers 4.5x model whose attention masks are
    built with vmap; record in ``info["hf_compat"]`` that it was applied and why. Anything else is left alone."""
    masking = vmap_masking_utils()
    needing = _masked_implementations(made, masking) if masking is not None else []
    if not needing:
        return
    masks_without_vmap()
    version = getattr(sys.modules.get("transformers"), "__version__", "4.x")
    info["hf_compat"] = {
        "applied": "attention masks built without torch.vmap",
        "attn_implementation": needing,
        "why": WHY.format(version=version),
    }


def explain_trace_failure(text: str) -> str | None:
    """One sentence for a ``torch.jit.trace`` that failed with ``unordered_map::at`` in transformers' masks
    (``text``: the error with its traceback); None for any other failure."""
    if "unordered_map::at" not in text or ("masking_utils" not in text and "vmap" not in text):
        return None
    return (
        "torch.jit.trace failed with unordered_map::at in transformers' attention-mask code: transformers "
        "4.5x builds its masks with torch.vmap, which the tracer cannot follow (the model itself is fine); "
        "build the model through the module kernel's entry (it builds the masks without vmap), call "
        "neffbench.kernels.module.hf_masks.masks_without_vmap() before tracing, or use transformers 5."
    )


def reproduce_source(info: dict[str, Any]) -> str:
    """The lines ``reproduce.py`` needs to build the module as the job did: this module's code and its call."""
    if not info.get("hf_compat"):
        return ""
    from pathlib import Path

    from neffbench.kernels.script_template import fill
    from neffbench.kernels.source import module_source

    here = Path(__file__).parent
    return fill(
        here / "templates" / "hf_compat.py",
        why=info["hf_compat"]["why"],
        hf_masks=module_source(here / "hf_masks.py"),
    )
