"""The seed: vLLM's rotary position embedding (RoPE) forward traced for AWS Neuron with torch_neuronx.trace.

One line differs from the script the workbench started from: `import neffbench as torch_neuronx` instead of
`import torch_neuronx`. Every call is then a job of the workbench (`neffbench list compiler_workdir`,
`neffbench explain`, `neffbench run`, `neffbench compare`); without the Neuron toolchain it checks the module on
the CPU and returns the CPU-traced module.
"""

from pathlib import Path

import torch
from torch import nn

import neffbench as torch_neuronx

HEAD_SIZE = 64
ROTARY_DIM = 64
NUM_HEADS_Q = 32
NUM_HEADS_K = 8
MAX_POS = 128
BASE = 500000.0
NUM_TOKENS = 1


def apply_rotary_emb(x, cos, sin, is_neox_style):
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    return torch.stack((o1, o2), dim=-1).flatten(-2)


class RotaryEmbedding(nn.Module):
    """vLLM's RotaryEmbedding.forward_native, with the cos/sin cache passed in."""

    def __init__(self, head_size, rotary_dim, is_neox_style=True):
        super().__init__()
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.is_neox_style = is_neox_style

    def forward(self, positions, query, key, cos_sin_cache):
        positions = positions.flatten()
        num_tokens = positions.shape[0]
        cos_sin = cos_sin_cache.index_select(0, positions)
        cos, sin = cos_sin.chunk(2, dim=-1)
        query_shape = query.shape
        query = query.view(num_tokens, -1, self.head_size)
        query_rot = apply_rotary_emb(query[..., : self.rotary_dim], cos, sin, self.is_neox_style)
        query = torch.cat((query_rot, query[..., self.rotary_dim :]), dim=-1).reshape(query_shape)
        if key is None:
            return query, None  # a traced graph cannot return None: the wrapper below passes a key
        key_shape = key.shape
        key = key.view(num_tokens, -1, self.head_size)
        key_rot = apply_rotary_emb(key[..., : self.rotary_dim], cos, sin, self.is_neox_style)
        key = torch.cat((key_rot, key[..., self.rotary_dim :]), dim=-1).reshape(key_shape)
        return query, key


class RopeWrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.rope = RotaryEmbedding(HEAD_SIZE, ROTARY_DIM)

    def forward(self, positions, q, k, cache):
        return self.rope(positions, q, k, cache)


def cos_sin_cache():
    inv_freq = 1.0 / (BASE ** (torch.arange(0, ROTARY_DIM, 2, dtype=torch.float32) / ROTARY_DIM))
    freqs = torch.outer(torch.arange(MAX_POS, dtype=torch.float32), inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


generator = torch.Generator().manual_seed(0)
positions = torch.randint(0, MAX_POS, (NUM_TOKENS,), generator=generator)
q = torch.randn(NUM_TOKENS, NUM_HEADS_Q * HEAD_SIZE, generator=generator)
k = torch.randn(NUM_TOKENS, NUM_HEADS_K * HEAD_SIZE, generator=generator)
cache = cos_sin_cache()

wrapper = RopeWrapper().eval()
traced = torch_neuronx.trace(wrapper, (positions, q, k, cache), compiler_args="--lnc=2", compiler_workdir="./compiler_workdir")

q_out, k_out = traced(positions, q, k, cache)
expected_q, expected_k = wrapper(positions, q, k, cache)
print(f"traced: query {tuple(q_out.shape)}, key {tuple(k_out.shape)}")
print(f"max abs difference against eager: {max((q_out - expected_q).abs().max(), (k_out - expected_k).abs().max()):.3g}")
neffs = sorted(Path("compiler_workdir").glob("**/*.neff"))
print(f"NEFF: {neffs[-1] if neffs else 'none (cpu-check makes none)'}")
