"""Open .py…: a file's module classes read with ast, and the top one (used by no other) found for the chooser."""

from __future__ import annotations

from neffbench.kernels.module.gui.report import entry_choices

LAYERED = """
import torch
from torch import nn


class Block(nn.Module):
    def forward(self, x):
        return x


class Model(nn.Module):
    def __init__(self, layers: int = 2):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(layers))

    def forward(self, x):
        return self.head(x)


class Tuned(Block):
    pass


class Config:
    pass


def rotate_half(x):
    return x
"""


def test_the_top_module_is_the_one_no_other_uses(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(LAYERED, encoding="utf-8")
    found = entry_choices(str(path))
    assert found["modules"] == ["Block", "Model", "Tuned"]  # Tuned through Block; Config is no module
    # Block is used by Model (a layer) and Tuned (a base); of Model and Tuned, the later one.
    assert found["top"] == "Tuned"
    path.write_text(LAYERED.replace("class Tuned(Block):\n    pass\n", ""), encoding="utf-8")
    assert entry_choices(str(path))["top"] == "Model"


def test_a_file_without_module_classes_has_no_top(tmp_path):
    path = tmp_path / "fns.py"
    path.write_text("def f(x):\n    return x\n", encoding="utf-8")
    assert entry_choices(str(path))["top"] is None and entry_choices(str(path))["modules"] == []
