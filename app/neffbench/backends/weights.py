"""A digest of a built module's parameters and buffers: whether two builds made the same module.

Pasted as it is into ``reproduce.py`` (torch and hashlib only), so the script checks its own build the way the
workbench does. Every byte is hashed up to ``FULL_BYTES`` in all; above that an evenly strided sample of each
tensor is (the same sample in every build), and the record says which.
"""

from __future__ import annotations

import hashlib

import torch

FULL_BYTES = 1 << 30
SAMPLE_ELEMENTS = 1 << 16  # per tensor, when sampling


def _named_tensors(module):
    if not isinstance(module, torch.nn.Module):
        return []
    # Buffers too, non-persistent ones included (rotary tables): they are inlined into the NEFF like weights.
    found = [("param " + n, t) for n, t in module.named_parameters()]
    found += [("buffer " + n, t) for n, t in module.named_buffers() if t is not None]
    return sorted(found, key=lambda item: item[0])


def weights_digest(module) -> dict:
    """{"sha256", "tensors", "bytes", "method"} of the module's parameters and buffers (by name, dtype, shape, values)."""
    tensors = _named_tensors(module)
    total = sum(t.numel() * t.element_size() for _, t in tensors)
    sampled = total > FULL_BYTES
    digest = hashlib.sha256()
    for name, tensor in tensors:
        digest.update(f"{name} {str(tensor.dtype).replace('torch.', '')} {list(tensor.shape)}\n".encode())
        if tensor.device.type == "meta":
            digest.update(b"meta")
            continue
        flat = tensor.detach().reshape(-1)
        if sampled and flat.numel() > SAMPLE_ELEMENTS:
            flat = flat[:: -(-flat.numel() // SAMPLE_ELEMENTS)]
        data = flat.cpu().contiguous()
        if data.numel():
            digest.update(
                data.view(torch.uint8).numpy().tobytes()
                if data.dtype != torch.bool
                else data.to(torch.uint8).numpy().tobytes()
            )
    method = (
        f"an evenly strided sample of at most {SAMPLE_ELEMENTS} elements of each tensor (the module has "
        f"{total / 2**30:.1f} GiB)"
        if sampled
        else "every byte"
    )
    return {"sha256": digest.hexdigest(), "tensors": len(tensors), "bytes": total, "method": method}


def weights_difference(now: dict, then: dict) -> str:
    """The sentence for a rebuild whose module differs from the one compiled (empty when it does not)."""
    if not then or not then.get("sha256") or now.get("sha256") == then.get("sha256"):
        return ""
    return (
        f"the module built now differs from the one compiled: its weights digest is {now['sha256'][:12]} "
        f"({now['tensors']} tensors, {now['bytes']} bytes), the compiled module's was {then['sha256'][:12]} "
        f"({then.get('tensors')} tensors, {then.get('bytes')} bytes)"
    )
