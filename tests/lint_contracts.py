"""import-linter contract types of the workbench's own (pyproject.toml's ``contract_types``), run by ``lint-imports``."""

from __future__ import annotations

from grimp import ImportGraph
from importlinter.contracts.independence import IndependenceContract
from importlinter.domain import fields
from importlinter.domain.contract import ContractCheck
from importlinter.domain.imports import ModuleExpression


class SubpackagesIndependenceContract(IndependenceContract):
    """The subpackages of ``parent`` import nothing of each other, even indirectly: an independence contract whose
    modules are found in the graph (every child of ``parent`` that has children of its own), so that a subpackage
    added later is covered without an edit. Modules directly in ``parent`` (what the subpackages share) are not
    among them."""

    type_name = "subpackages_independence"

    parent = fields.ModuleField()
    modules = fields.SetField(subfield=fields.ModuleExpressionField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        parent = self.parent.name  # type: ignore[attr-defined]
        found = sorted(child for child in graph.find_children(parent) if graph.find_children(child))
        if len(found) < 2:
            raise ValueError(f"{parent} has {len(found)} subpackage(s): nothing to keep independent.")
        self.modules = {ModuleExpression(child) for child in found}  # type: ignore[assignment]
        return super().check(graph, verbose)
