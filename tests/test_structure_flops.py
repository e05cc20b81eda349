"""The structure's FLOP counter: torch's FlopCounterMode's figures, without the dynamo import that mode costs."""

from __future__ import annotations

import subprocess
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from neffbench.structure.flops import FlopCounter


class _Mixed(nn.Module):
    """Matmuls, a convolution, attention, an embedding, a norm: what the formulas cover and what decomposes."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(16, 32)
        self.conv = nn.Conv2d(3, 4, 3)
        self.embed = nn.Embedding(10, 16)
        self.norm = nn.LayerNorm(32)

    def forward(self, x, image, ids):
        y = self.norm(self.linear(x + self.embed(ids)))
        q = y.view(1, 2, 4, 16)
        attended = F.scaled_dot_product_attention(q, q, q)
        return y @ y.T, self.conv(image), attended, torch.bmm(y[None], y.T[None]), torch.einsum("ij,jk->ik", y, y.T)


def test_the_counter_counts_what_torchs_flop_counter_mode_counts():
    torch.manual_seed(0)
    model, args = _Mixed(), (torch.randn(4, 16), torch.randn(1, 3, 8, 8), torch.tensor([1, 2, 3, 4]))
    with torch.no_grad():
        with FlopCounter() as ours:
            model(*args)
        with FlopCounterMode(display=False) as theirs:
            model(*args)
    assert ours.get_total_flops() == theirs.get_total_flops() > 0


_COUNT_IN_A_FRESH_PROCESS = """
import sys, torch
from neffbench.structure.flops import FlopCounter
with torch.no_grad(), FlopCounter() as counter:
    torch.nn.Linear(8, 8)(torch.ones(2, 8))
print(counter.get_total_flops(), "torch._dynamo" in sys.modules)
"""


def test_counting_imports_no_compiler():
    """Every compile worker captures its job's structure: torch's mode would import dynamo there (1.5 CPU-s)."""
    proc = subprocess.run(
        [sys.executable, "-c", _COUNT_IN_A_FRESH_PROCESS], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["256", "False"]
