"""Modules holding or passing tensors that are not plain dense arrays: what the workbench must read, name and judge
without tripping on them."""

import torch
from torch import nn


class Decoder(nn.Module):
    """Holds its alignment heads as whisper's model does: a sparse bool buffer the forward never reads."""

    def __init__(self, n_layer: int = 2, n_head: int = 2, width: int = 8):
        super().__init__()
        self.proj = nn.Linear(width, width)
        heads = torch.zeros(n_layer, n_head, dtype=torch.bool)
        heads[n_layer // 2 :] = True
        self.register_buffer("alignment_heads", heads.to_sparse(), persistent=False)

    def forward(self, x):
        return self.proj(x)


class SparseHeads(nn.Module):
    """whisper's ``alignment_heads``, one level down: ``decoder.alignment_heads``."""

    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def forward(self, x):
        return self.decoder(x)


class ReadsSparse(nn.Module):
    """A forward that reads its sparse buffer."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.register_buffer("mask", torch.eye(width).to_sparse_csr())

    def forward(self, x):
        return x @ self.mask.to_dense()


class QuantizedWeight(nn.Module):
    """An int8 weight kept quantized (per channel) and dequantized in the forward."""

    def __init__(self, width: int = 8):
        super().__init__()
        generator = torch.Generator().manual_seed(0)
        weight = torch.randn(width, width, generator=generator)
        scales = weight.abs().amax(dim=1) / 127
        self.register_buffer(
            "weight", torch.quantize_per_channel(weight, scales, torch.zeros(width, dtype=torch.long), 0, torch.qint8)
        )

    def forward(self, x):
        return x @ self.weight.dequantize().t()


class Opaque(torch.Tensor):
    """A tensor subclass that implements no operation at all (a library's tensor type, out of its library)."""

    @staticmethod
    def __new__(cls, shape):
        return torch.Tensor._make_wrapper_subclass(cls, shape, dtype=torch.float32)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"Opaque implements no operation ({func})")


class HoldsOpaque(nn.Module):
    """A buffer nothing can read, beside a plain layer."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.register_buffer("opaque", Opaque((3,)))

    def forward(self, x):
        return self.proj(x)


class ReturnsSparse(nn.Module):
    """A forward whose output is sparse."""

    def forward(self, x):
        return torch.relu(x).to_sparse()


class Identity(nn.Module):
    """Whatever it is given, doubled."""

    def forward(self, x):
        return x * 2


def sparse_examples(batch):
    """An examples function that hands the forward a sparse input."""
    return {"x": torch.eye(batch).to_sparse()}
