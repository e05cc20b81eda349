"""int64 ids beyond int32's range, declared by a tensor spec or handed over by an examples function."""

import torch
from torch import nn


class HashedIds(nn.Module):
    """Ids hashed into a small table: any int64 in, a row each out."""

    def __init__(self, rows: int = 97, width: int = 8):
        super().__init__()
        self.table = nn.Embedding(rows, width)
        self.rows = rows

    def forward(self, ids):
        return self.table(torch.remainder(ids, self.rows))


def big_ids(batch, seq):
    """Ids from 2**33 up: beyond int32, and only the values themselves say so."""
    return {"ids": torch.arange(batch * seq).reshape(batch, seq) + 2**33}
