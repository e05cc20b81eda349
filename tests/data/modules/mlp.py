"""MLP factories and classes for the module kernel.

Exercises:
- a factory entry (``mlp.py:make_mlp``) whose keyword arguments carry form-generating
  annotations: ``int``, ``Literal[...]`` (a choice), ``bool`` and ``float``;
- a class entry (``mlp.py:GatedMLP``) used as a factory, with an ``Annotated`` float carrying
  ``{"min": ..., "max": ...}`` bounds, whose forward takes two tensors and returns a tuple of two.
"""

from typing import Annotated, Literal

import torch
from torch import nn

_ACTIVATIONS = {"gelu": nn.GELU, "silu": nn.SiLU, "relu": nn.ReLU}


class MLP(nn.Module):
    """Linear -> activation -> dropout -> Linear: hidden -> intermediate -> hidden."""

    def __init__(self, hidden_size: int, intermediate_size: int, activation: str, bias: bool, dropout: float) -> None:
        super().__init__()
        self.up = nn.Linear(hidden_size, intermediate_size, bias=bias)
        self.act = _ACTIVATIONS[activation]()
        self.drop = nn.Dropout(dropout)
        self.down = nn.Linear(intermediate_size, hidden_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.drop(self.act(self.up(x))))


def make_mlp(
    hidden_size: int = 64,
    intermediate_size: int = 128,
    activation: Literal["gelu", "silu", "relu"] = "silu",
    bias: bool = True,
    dropout: float = 0.0,
) -> nn.Module:
    """Factory entry: build an :class:`MLP` in eval mode."""
    return MLP(hidden_size, intermediate_size, activation, bias, dropout).eval()


class GatedMLP(nn.Module):
    """Two inputs, two outputs: ``down(up(x) * sigmoid(gate) * scale)`` and ``sigmoid(gate)``."""

    def __init__(self, hidden_size: int = 32, scale: Annotated[float, {"min": 0.0, "max": 10.0}] = 1.0) -> None:
        super().__init__()
        self.scale = scale
        self.up = nn.Linear(hidden_size, hidden_size)
        self.down = nn.Linear(hidden_size, hidden_size)

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        gate_activation = torch.sigmoid(gate)
        out = self.down(self.up(x) * gate_activation * self.scale)
        return out, gate_activation
