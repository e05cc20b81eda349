"""What the window is made of, declared for the type checker: the actions and toolbar fields ``actions.py`` sets,
and the panels and controllers ``panels.py`` and ``logs.py`` set once the window has painted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLineEdit, QMenu

if TYPE_CHECKING:  # the panels' modules are imported once the window has painted (window_panels)
    from neffbench.gui.artifacts.panel import ArtifactsPanel
    from neffbench.gui.compile.controller import CompileController
    from neffbench.gui.compile.panel import CompilePanel
    from neffbench.gui.numerics.controller import CompareController
    from neffbench.gui.numerics.panel import NumericsPanel
    from neffbench.gui.preview.controller import PreviewController
    from neffbench.gui.preview.host import PreviewHost
    from neffbench.gui.run.controller import RunController
    from neffbench.gui.run.panel import RunPanel
    from neffbench.gui.shell.bug_report import BugReportSaver
    from neffbench.gui.shell.logs import DropHandler
    from neffbench.gui.shell.sweeps import WindowSweeps
    from neffbench.gui.structure.panel import StructurePanel


class WindowParts:
    """Annotations only: ``MainWindow`` derives from it so that every reader of ``window.compile_panel`` and the
    like is checked against one declaration."""

    # Set by build_actions and build_toolbar (shell/actions.py).
    compile_action: QAction
    recompile_action: QAction
    cancel_action: QAction
    open_action: QAction
    save_action: QAction
    workdir_action: QAction
    explain_action: QAction
    quit_action: QAction
    toolbar_action: QAction
    sweep_action: QAction
    manual_action: QAction
    shortcuts_action: QAction
    about_action: QAction
    preset_actions: dict[str, QAction]
    presets_menu: QMenu
    workdir_edit: QLineEdit
    # Set by window_panels.build_preview and .build, and logs.install, once the window has painted.
    controller: CompileController | None
    preview_controller: PreviewController | None
    preview_stack: PreviewHost | None
    compile_panel: CompilePanel
    artifacts: ArtifactsPanel
    run_controller: RunController
    run_panel: RunPanel
    sweeps: WindowSweeps
    compare_controller: CompareController
    numerics: NumericsPanel
    structure: StructurePanel
    bug_reports: BugReportSaver
    drops: DropHandler
