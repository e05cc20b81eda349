"""The Structure tab and the others, wired: it follows the job compiled, compared or run, and a module picked in
it picks its tap in the Numerics tab, and the reverse."""

from __future__ import annotations

from typing import Any

from neffbench.gui.numerics.panel import NumericsPanel
from neffbench.gui.structure.panel import StructurePanel


def tap_index(numerics: NumericsPanel, path: str) -> int | None:
    """The Numerics tab's row of the tap at module ``path``, when it shows that module's job."""
    taps = (numerics.document or {}).get("taps") or []
    for i, tap in enumerate(taps):
        module = str(tap.get("module") or "")
        if module == path or (not path and module.startswith("(output")):
            return i
    return None


def _same_job(structure: StructurePanel, numerics: NumericsPanel) -> bool:
    return structure.job_dir is not None and structure.job_dir == numerics.job_dir


def on_tap_selected(structure: StructurePanel, numerics: NumericsPanel, index: int) -> None:
    taps = (numerics.document or {}).get("taps") or []
    if _same_job(structure, numerics) and 0 <= index < len(taps):
        module = str(taps[index].get("module") or "")
        structure.select_path("" if module.startswith("(output") else module)


def on_node_selected(structure: StructurePanel, numerics: NumericsPanel, path: str) -> None:
    if _same_job(structure, numerics):
        index = tap_index(numerics, path)
        if index is not None:
            numerics.select_tap(index)


def wire(window: Any) -> None:
    structure, numerics = window.panels.structure, window.panels.numerics
    structure.start_dir = lambda: str(window.workdir)
    numerics.table.tap_selected.connect(lambda index: on_tap_selected(structure, numerics, index))
    numerics.chart.tap_clicked.connect(lambda index: on_tap_selected(structure, numerics, index))
    structure.node_selected.connect(lambda path: on_node_selected(structure, numerics, path))
    # The job a compare is of, once it is shown there; its new errors once it finishes.
    numerics.scanned.connect(lambda _scan: follow(structure, numerics.job_dir))
    window.controllers.compile.job_finished.connect(
        lambda result: follow(structure, str(result.job_dir)) if result.outcome == "succeeded" else None
    )
    window.controllers.run.finished.connect(lambda _result: refresh(structure))


def follow(structure: StructurePanel, job_dir: str | None) -> None:
    """Show ``job_dir`` (read again when it is the one shown: a compare or a profile may have come)."""
    if not job_dir:
        return
    if structure.job_dir == job_dir:
        structure.reload()
    else:
        structure.set_job(job_dir)


def refresh(structure: StructurePanel) -> None:
    structure.reload()
