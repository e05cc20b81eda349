"""What a user's .py file defines at its top level, read with ast and never run: the names it offers to compile."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any


class SourceUnreadable(ValueError):
    """A .py file whose top level cannot be read; the message says why, ``line`` is a syntax error's line."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def top_level_names(path: str | Path) -> list[dict[str, Any]]:
    """The public classes, functions and objects at the top level of ``path``, as ``{"name", "kind", "line", "doc"}``
    (``kind``: class, function or object): classes and functions first, then the names it assigns (a model instance,
    say; not CONSTANTS), each in file order. SourceUnreadable when the file cannot be read or parsed."""
    name = Path(path).name
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    except OSError as exc:
        raise SourceUnreadable(f"{name} cannot be read: {exc.strerror or exc}.") from None
    except SyntaxError as exc:
        raise SourceUnreadable(f"{name} has a syntax error at line {exc.lineno}: {exc.msg}.", exc.lineno) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SourceUnreadable(f"{name} is not a Python source file ({type(exc).__name__}).") from None
    found: dict[str, dict[str, Any]] = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            doc = (ast.get_docstring(node) or "").strip().split("\n")[0]
            found[node.name] = {"name": node.name, "kind": kind, "line": node.lineno, "doc": doc}
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and not target.id.isupper() and target.id not in found:
                    found[target.id] = {"name": target.id, "kind": "object", "line": node.lineno, "doc": ""}
    return sorted(
        (n for n in found.values() if not n["name"].startswith("_")), key=lambda n: (n["kind"] == "object", n["line"])
    )
