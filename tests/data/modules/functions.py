"""Plain functions as module-kernel entries (no nn.Module at all).

Exercises:
- ``functions.py:scaled_add``: two tensor inputs plus a non-tensor ``alpha: float`` that must be
  bound as a constant (traced into the graph), not passed as a tensor;
- ``functions.py:softmax_rows``: one unannotated input, one output;
- ``functions.py:two_outputs``: a ``dict[str, Tensor]`` return that the wrapper must flatten into a
  tuple of tensors in a stable (insertion) order: ``mean`` then ``centered``.
"""

import torch


def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float = 0.5) -> torch.Tensor:
    return x + alpha * y


def softmax_rows(x):
    return torch.softmax(x, dim=-1)


def two_outputs(x) -> dict[str, torch.Tensor]:
    mean = x.mean(dim=-1, keepdim=True)
    return {"mean": mean, "centered": x - mean}
