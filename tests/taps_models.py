"""Small modules for the taps tests: blocks in a ModuleList, a layer that loses precision on purpose, and odd ones."""

from __future__ import annotations

import torch
from torch import nn


class AutoCastLike(nn.Module):
    """Does float32 arithmetic in bfloat16, as a compiler's auto-cast would, and leaves float64 alone: the
    layer that loses precision on purpose."""

    def forward(self, x):
        if x.dtype != torch.float32:
            return x
        return x.to(torch.bfloat16).to(torch.float32)


class MLP(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.up = torch.nn.Linear(width, 2 * width)
        self.act = torch.nn.GELU()
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class Block(nn.Module):
    def __init__(self, width=8, lossy=False):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.mlp = MLP(width)
        self.cast = AutoCastLike() if lossy else torch.nn.Identity()

    def forward(self, x):
        return x + self.cast(self.mlp(self.norm(x)))


class Net(nn.Module):
    """Three blocks in a ModuleList (indexed, never called: no level of its own); the second one lossy."""

    def __init__(self, width=8, lossy=1):
        super().__init__()
        self.embed = torch.nn.Linear(4, width)
        self.layers = torch.nn.ModuleList(Block(width, lossy=(i == lossy)) for i in range(3))
        self.head = torch.nn.Linear(width, 2)

    def forward(self, x):
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h)
        return {"logits": self.head(h), "hidden": (h,)}


class Shared(nn.Module):
    """Calls one module twice and has a submodule whose output holds no tensor."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.count = Counter()

    def forward(self, x):
        self.count(x)
        return self.lin(self.lin(x))


class Counter(nn.Module):
    def forward(self, x):
        return x.shape[0]


class Float32Only(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        h = self.emb(ids)
        if h.dtype != torch.float32:
            raise TypeError("this module runs in float32 only")
        return h
