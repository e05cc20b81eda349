"""What the window is made of, declared for the type checker: the actions and toolbar fields ``actions.py`` sets, and
the drop and bug report handlers ``logs.py`` sets once the panels are built (the panels themselves are
``window.panels`` and ``window.controllers``, built by ``panels.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLineEdit, QMenu

if TYPE_CHECKING:  # imported once the window has painted, with the panels
    from neffbench.gui.shell.bug_report import BugReportSaver
    from neffbench.gui.shell.logs import DropHandler


class WindowParts:
    """Annotations only: ``MainWindow`` derives from it so that every reader of ``window.compile_action`` and the
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
    # Set by logs.install, once the panels are built.
    bug_reports: BugReportSaver
    drops: DropHandler
