"""A module whose forward branches on a tensor's value: one graph under torch.jit.trace (which records
the branch taken, with a TracerWarning), a graph break under torch.compile(fullgraph=True)."""

import torch
from torch import nn


class DataDependentBranch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        if y.sum() > 0:  # the graph break: dynamo cannot trace a branch on a tensor's value
            return y + 1
        return y - 1
