"""An examples function: the escape hatch for inputs a tensor-spec table cannot describe.

``examples_fn.py:make_examples`` is called with the bucket values (``batch``, ``seq``) and returns
the inputs by name; here ``mask`` is a lower-triangular causal mask that no ``dtype[dims] init``
spec can express. ``examples_fn.py:Masked`` is the matching module, ``forward(x, mask)``.
"""

import torch
from torch import nn


def make_examples(batch: int, seq: int) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, seq, Masked.DIM, generator=generator)
    mask = torch.tril(torch.ones(seq, seq, dtype=torch.bool)).expand(batch, seq, seq).contiguous()
    return {"x": x, "mask": mask}


class Masked(nn.Module):
    """Masked self-attention scores averaging: ``softmax(masked(x @ x^T)) @ x``."""

    DIM = 8

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(self.DIM, self.DIM)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        scores = h @ h.transpose(-1, -2)
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ h
