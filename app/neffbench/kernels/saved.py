"""A call saved to be compiled later: the object ``neffbench.trace`` was given and its example inputs, as files.

The API saves them (``neffbench.api.derive``); a kernel that can compile objects in memory turns them into a spec
of its own (``Kernel.spec_from_object``). Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

# How the object was saved: pickled (your own code by value, installed libraries' classes by name, the weights
# with it) or, when it cannot be pickled, the CPU trace of it (TorchScript, which holds no Python).
PICKLED = "pickled"
TORCHSCRIPT = "torchscript"
MODULE_FILE = "module.pt"


@dataclass(frozen=True)
class SavedInput:
    """One tensor of the example inputs, in the order the call gave them: its file in the folder, dtype and shape."""

    file: str
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class SavedCall:
    """``folder`` holds ``module.pt`` (saved ``how``) and one ``.npy`` file per input tensor. ``structure``: how the
    tensors nest in the call's arguments (``"tensor"``, ``["tuple"|"list", [...]]``, ``["dict", {key: ...}]``), the
    top level being the positional arguments; ``label``: what the object is, in words (``Wrapper``)."""

    folder: Path
    how: str
    inputs: tuple[SavedInput, ...]
    structure: Any
    label: str
    name: str

    @property
    def flat(self) -> bool:
        """Whether every positional argument is a tensor of its own (nothing nested)."""
        return isinstance(self.structure, list) and all(s == "tensor" for s in self.structure[1])
