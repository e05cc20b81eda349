"""What a user's .py file defines: one reading of its top level for the window's chooser and the CLI's advice."""

from __future__ import annotations

import pytest

from neffbench.usercode.defines import SourceUnreadable, top_level_names

SOURCE = '''"""A user's file."""
import torch
from torch import nn

WIDTH = 8
_cache = {}
model = None


class Tiny(nn.Module):
    """A tiny model.

    More words."""

    def forward(self, x):
        return x


def _helper():
    pass


def make_tiny():
    return Tiny()


model = make_tiny()
tiny, other = make_tiny(), None
'''


def test_classes_and_functions_come_first_then_the_objects_it_makes(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(SOURCE, encoding="utf-8")
    assert [(n["name"], n["kind"], n["line"], n["doc"]) for n in top_level_names(path)] == [
        ("Tiny", "class", 10, "A tiny model."),
        ("make_tiny", "function", 23, ""),
        ("model", "object", 7, ""),
    ]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"def broken(:\n    pass\n", "mine.py has a syntax error at line 1: "),
        (b"x = '\xff\xfe'\n", "mine.py is not a Python source file (UnicodeDecodeError)."),
    ],
)
def test_a_file_that_cannot_be_read_says_why(tmp_path, data, why):
    path = tmp_path / "mine.py"
    path.write_bytes(data)
    with pytest.raises(SourceUnreadable, match="^" + why.replace("(", r"\(").replace(")", r"\)")):
        top_level_names(path)


def test_the_window_and_the_command_list_the_same_names(tmp_path, neffbench_in_process):
    from neffbench.kernels.module.gui.report import entry_choices

    path = tmp_path / "mine.py"
    path.write_text(SOURCE, encoding="utf-8")
    assert [n["name"] for n in entry_choices(str(path))["names"]] == ["Tiny", "make_tiny", "model"]
    proc = neffbench_in_process("check", "mine.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert (
        "add :NAME to say what in it to compile, as in mine.py:Tiny. It defines: Tiny, make_tiny, model." in proc.stderr
    )


def test_a_file_that_only_makes_an_object_offers_it(tmp_path, neffbench_in_process):
    (tmp_path / "made.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2)\n", encoding="utf-8")
    proc = neffbench_in_process("check", "made.py", cwd=tmp_path)
    assert "as in made.py:model. It defines: model." in proc.stderr


def test_a_file_with_a_syntax_error_is_named_by_the_command(tmp_path, neffbench_in_process):
    (tmp_path / "bad.py").write_text("def broken(:\n", encoding="utf-8")
    proc = neffbench_in_process("check", "bad.py", cwd=tmp_path)
    assert "bad.py is Python, not a spec, and has a syntax error at line 1." in proc.stderr
