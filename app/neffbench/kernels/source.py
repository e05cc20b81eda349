"""A kernel module's source as it runs, ready to paste into ``reproduce.py`` (which has its own docstring and imports)."""

from __future__ import annotations

import ast
from pathlib import Path


def module_source(path: Path) -> str:
    """The file without its docstring and ``__future__`` import."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    lines = text.splitlines()
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
        lines = lines[first.end_lineno :]
    body = "\n".join(line for line in lines if line.strip() != "from __future__ import annotations")
    return body.strip() + "\n"
