"""Module-level nn.Module instances, used as "object" entries.

Entries: ``instances.py:norm`` and ``instances.py:conv``.

The seed is set before building them so their weights are the same on every load of the file.
Both forwards name their one tensor ``input`` (torch's own signatures): ``norm`` takes
``[..., 16]``, ``conv`` takes ``[batch, 4, length >= 3]`` and returns ``[batch, 8, length - 2]``.
"""

import torch

torch.manual_seed(0)

norm = torch.nn.LayerNorm(16)
conv = torch.nn.Conv1d(4, 8, 3)
