"""Tensors that are not plain strided arrays (sparse, quantized, nested, meta, subclasses): what each is called in
a sentence, and its values as a plain tensor wherever the workbench reads values (statistics, saved arrays, taps).

The weights digest reads such tensors by their parts instead (``neffbench.backends.weights``, pasted into
``reproduce.py`` and so free of this module).
"""

from __future__ import annotations

from typing import Any

_READ_ERRORS = (RuntimeError, TypeError, NotImplementedError, AttributeError)


class UnreadableTensor(ValueError):
    """A tensor whose values the workbench cannot read as one array; the message says what it is and why."""


def describe(tensor: Any) -> str | None:
    """``a sparse_coo tensor``, ``a quantized qint8 tensor``, ``a meta tensor``...; None for a plain strided one."""
    import torch

    if type(tensor).__torch_dispatch__ is not torch.Tensor.__torch_dispatch__:  # a plain subclass reads as a tensor
        return f"a tensor of class {type(tensor).__name__}"
    if tensor.is_nested:
        return "a nested tensor"
    if tensor.is_quantized:
        return f"a quantized {str(tensor.dtype).replace('torch.', '')} tensor"
    if tensor.layout != torch.strided:
        return f"a {str(tensor.layout).replace('torch.', '').lstrip('_')} tensor"
    if tensor.device.type == "meta":
        return "a meta tensor"
    return None


def dense(tensor: Any) -> Any:
    """The values as a plain strided CPU tensor: a sparse one made dense, a quantized one dequantized, a subclass
    as the torch.Tensor it holds. Raises UnreadableTensor, saying why, for one without such values (meta, nested)."""
    import torch

    what = describe(tensor)
    if what is None:
        return tensor.detach().cpu()
    if tensor.device.type == "meta":
        raise UnreadableTensor(f"{what} holds shapes only, no values")
    if tensor.is_nested:
        raise UnreadableTensor(f"{what} holds tensors of different shapes, not one array")
    try:
        t = tensor.detach()
        if type(t).__torch_dispatch__ is not torch.Tensor.__torch_dispatch__:
            t = t.as_subclass(torch.Tensor)
        if t.is_quantized:
            t = t.dequantize()
        elif t.layout != torch.strided:
            t = t.to_dense()
        return t.cpu().contiguous()
    except _READ_ERRORS as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UnreadableTensor(f"{what}, whose values torch cannot give as one array: {first}") from exc
