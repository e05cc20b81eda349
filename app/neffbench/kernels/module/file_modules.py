"""The module classes a .py file defines (read with ast, never run) and its top one: the module no other one uses."""

from __future__ import annotations

import ast

# A base whose last part ends so is taken for a module class: nn.Module, torch.nn.Module, PreTrainedModel.
_MODULE_SUFFIXES = ("Module", "Model")


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):  # Generic[T]-style bases
        return _base_name(node.value)
    return ""


def module_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """The top-level classes that derive from a module (directly, or through another module class of the file)."""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    found: set[str] = set()
    changed = True
    while changed:  # a class may derive from one the file defines further down
        changed = False
        for node in classes:
            bases = {_base_name(b) for b in node.bases}
            if node.name not in found and any(b.endswith(_MODULE_SUFFIXES) or b in found for b in bases):
                found.add(node.name)
                changed = True
    return [node for node in classes if node.name in found]


def top_module(classes: list[ast.ClassDef]) -> str | None:
    """The module class no other one names (as a base, a layer or an argument); of several, the last defined, as a
    file usually builds up to its model. None when every one is used by another."""
    names = {node.name for node in classes}
    used: set[str] = set()
    for node in classes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in names and inner.id != node.name:
                used.add(inner.id)
    unused = [node.name for node in classes if node.name not in used]
    return unused[-1] if unused else None
