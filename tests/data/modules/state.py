"""Forwards that do more than return their outputs: a static KV cache, writes into an input, random draws and a
parameter nobody initialises. Each is what tracing silently turns into constants (see README.md)."""

import torch
import torch.nn.functional as F
from torch import nn


class KVCache(nn.Module):
    """A static cache, as gpt-fast and most Neuron LLM code keep one: written in place at the step's positions."""

    def __init__(self, heads: int, max_seq: int, head_dim: int) -> None:
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, heads, max_seq, head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_seq, head_dim))

    def update(self, input_pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        return self.k_cache, self.v_cache


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, max_seq: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.kv_cache = KVCache(heads, max_seq, self.head_dim)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        keys, values = self.kv_cache.update(input_pos, k, v)
        # Each query sees the cached positions up to its own.
        positions = torch.arange(keys.shape[2])
        mask = positions[None, :] <= input_pos[:, None]
        scores = (q @ keys.transpose(-1, -2)) / self.head_dim**0.5
        scores = scores.masked_fill(~mask, float("-inf"))
        y = scores.softmax(-1) @ values
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, max_seq: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attention = Attention(dim, heads, max_seq)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm(x), input_pos)
        return x + self.mlp(x)


class StaticCacheGPT(nn.Module):
    """Decoder layers over embeddings ``x`` [1, tokens, dim] at positions ``input_pos`` [tokens]: a prefill
    writes positions 0..n-1 of every layer's cache, each decode step one more."""

    def __init__(self, layers: int = 2, dim: int = 16, heads: int = 2, max_seq: int = 32) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim, heads, max_seq) for _ in range(layers))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, input_pos)
        return self.head(x)


class ScalesInput(nn.Module):
    """Writes into its input: eager callers see x doubled, a NEFF's caller never does."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + 1


class Noisy(nn.Module):
    """A different answer on every call: fresh noise drawn in forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 0.1 * torch.randn_like(x)


def make_dropout(p: float = 0.5):
    """A factory returning a function, not a module: nothing can put it in eval mode, so its dropout stays on."""

    def forward(x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, p, training=True)

    return forward


class Unset(nn.Module):
    """A parameter made with torch.empty and never filled (as whisper's positional embedding, before a
    checkpoint is loaded): its values are whatever memory held."""

    def __init__(self, n: int = 8, dim: int = 4) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.empty(n, dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) + self.table[: x.shape[0]]


class Counter(nn.Module):
    """A buffer counting calls, written with the value it already holds plus one: state too."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x * 2
