"""A digest of a built module's parameters and buffers: whether two builds made the same module.

Pasted as it is into ``reproduce.py`` (torch and hashlib only), so the script checks its own build the way the
workbench does. Every byte is hashed up to ``FULL_BYTES`` in all; above that an evenly strided sample of each
tensor is (the same sample in every build), and the record says which. A sparse or nested tensor is read by the
plain tensors it is made of (indices and values; components), a quantized one by its integers. A tensor neffbench
cannot read counts by its name, dtype and shape alone, and the record names it: the digest is the workbench's own
check, never a reason to fail the user's compile.
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


def _parts(tensor):
    """The plain strided tensors that hold a tensor's values: itself, or what a sparse or nested one is made of."""
    layout = tensor.layout
    if tensor.is_nested:
        return list(tensor.unbind())
    if layout == torch.sparse_coo:
        coalesced = tensor.coalesce()  # one order of indices for equal tensors
        return [coalesced.indices(), coalesced.values()]
    if layout in (torch.sparse_csr, torch.sparse_bsr):
        return [tensor.crow_indices(), tensor.col_indices(), tensor.values()]
    if layout in (torch.sparse_csc, torch.sparse_bsc):
        return [tensor.ccol_indices(), tensor.row_indices(), tensor.values()]
    if layout != torch.strided:  # mkldnn
        return [tensor.to_dense()]
    return [tensor]


def _plain(tensor) -> bool:
    return tensor.layout == torch.strided and not tensor.is_nested


def _header(name, tensor) -> bytes:
    dtype = str(tensor.dtype).replace("torch.", "")
    if _plain(tensor):
        return f"{name} {dtype} {list(tensor.shape)}\n".encode()
    shape = "nested" if tensor.is_nested else list(tensor.shape)
    return f"{name} {dtype} {shape} {str(tensor.layout).replace('torch.', '')}\n".encode()


def _nbytes(parts) -> int:
    return sum(p.numel() * p.element_size() for p in parts)


_READ_ERRORS = (RuntimeError, TypeError, NotImplementedError, AttributeError)


def _unreadable(name, tensor, exc) -> str:
    """``the buffer 'x' (a tensor of class Opaque: why)``: a tensor neffbench cannot read, named."""
    what = "parameter" if name.startswith("param ") else "buffer"
    plain = type(tensor) in (torch.Tensor, torch.nn.Parameter)
    kind = (
        f"a {str(tensor.layout).replace('torch.', '')} tensor"
        if plain
        else f"a tensor of class {type(tensor).__name__}"
    )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"the {what} '{name.partition(' ')[2]}' ({kind}: {first})"


def _read(tensor):
    """The plain tensors holding its values (a meta tensor: itself, whose bytes are counted, never read)."""
    return _parts(tensor.detach()) if tensor.device.type != "meta" else [tensor]


def _bytes(part, sampled) -> bytes:
    flat = part.reshape(-1)
    if sampled and flat.numel() > SAMPLE_ELEMENTS:
        flat = flat[:: -(-flat.numel() // SAMPLE_ELEMENTS)]
    data = flat.cpu().contiguous()
    if not data.numel():
        return b""
    return (
        data.view(torch.uint8).numpy().tobytes() if data.dtype != torch.bool else data.to(torch.uint8).numpy().tobytes()
    )


def weights_digest(module) -> dict:
    """{"sha256", "tensors", "bytes", "method"} of the module's parameters and buffers (by name, dtype, shape, values),
    and "unread": the tensors neffbench could not read, when there are any."""
    tensors, unread = [], {}
    for name, tensor in _named_tensors(module):
        try:
            tensors.append((name, tensor, _read(tensor)))
        except _READ_ERRORS as exc:
            tensors.append((name, tensor, None))
            unread[name] = _unreadable(name, tensor, exc)
    total = sum(_nbytes(parts) for _, _, parts in tensors if parts is not None)
    sampled = total > FULL_BYTES
    digest = hashlib.sha256()
    for name, tensor, parts in tensors:
        digest.update(_header(name, tensor))
        if tensor.device.type == "meta":
            digest.update(b"meta")
            continue
        try:
            chunks = [_bytes(part, sampled) for part in parts] if parts is not None else None
        except _READ_ERRORS as exc:
            chunks = None
            unread[name] = _unreadable(name, tensor, exc)
        for chunk in chunks if chunks is not None else [b"unread"]:
            digest.update(chunk)
    method = (
        f"an evenly strided sample of at most {SAMPLE_ELEMENTS} elements of each tensor (the module has "
        f"{total / 2**30:.1f} GiB)"
        if sampled
        else "every byte"
    )
    if unread:
        method += (
            f", except where neffbench cannot read a tensor, whose name, dtype and shape count instead: "
            f"{'; '.join(unread.values())}; this is a limit of neffbench, not of your module"
        )
    found = {"sha256": digest.hexdigest(), "tensors": len(tensors), "bytes": total, "method": method}
    return {**found, "unread": list(unread)} if unread else found


def weights_difference(now: dict, then: dict) -> str:
    """The sentence for a rebuild whose module differs from the one compiled (empty when it does not)."""
    if not then or not then.get("sha256") or now.get("sha256") == then.get("sha256"):
        return ""
    return (
        f"the module built now differs from the one compiled: its weights digest is {now['sha256'][:12]} "
        f"({now['tensors']} tensors, {now['bytes']} bytes), the compiled module's was {then['sha256'][:12]} "
        f"({then.get('tensors')} tensors, {then.get('bytes')} bytes)"
    )
