"""No module imports itself back, through any chain of imports (TYPE_CHECKING and in-function ones included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"


def _circles(graph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_imports_itself_back():
    grimp = pytest.importorskip("grimp")  # installed with the lint tools (import-linter)
    assert _circles(grimp.build_graph("neffbench", cache_dir=None)) == []


def _imports_from(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_no_module_a_package_face_imports_goes_back_through_that_face():
    """``from neffbench.sweeps import fields`` in a module that ``sweeps/__init__.py`` imports runs the face first."""
    offenders = []
    for face in sorted(APP.glob("neffbench/**/__init__.py")):
        package = ".".join(face.parent.relative_to(APP).parts)
        for name in _imports_from(face):
            module = APP.joinpath(*name.split(".")).with_suffix(".py")
            if name.startswith(package + ".") and module.exists() and package in _imports_from(module):
                offenders.append(f"{name} imports {package}, whose __init__ imports it")
    assert offenders == []
