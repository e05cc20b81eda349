"""The window's actions, menus and toolbar; what they trigger is wired in the window itself."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QLineEdit, QMenu, QToolButton

from neffbench.gui.shell import mnemonics
from neffbench.gui.shell.tabs import TAB_TITLES
from neffbench.kernels import registry
from neffbench.presets import PresetInfo, preset_infos


def _action(window, text: str, shortcut=None, tip: str = "") -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
    action.setToolTip(tip or text.replace("&", ""))
    action.setStatusTip(tip)
    window.addAction(action)
    return action


# A menu line longer than this is cut: the tooltip has the rest.
_MENU_TEXT_CHARS = 80


def _preset_action(window, info: PresetInfo) -> QAction:
    """ "Meta Llama 3.1 8B — 131072 positions, 32/8 heads, llama3 scaling (factor 8)", its source as the tips."""
    text = f"{info.model} — {info.figures}" if info.figures else info.model
    if len(text) > _MENU_TEXT_CHARS:
        text = text[: _MENU_TEXT_CHARS - 1].rstrip() + "…"
    action = QAction(text.replace("&", "&&"), window)  # a lone & would become a mnemonic
    action.setData(info.kernel)
    action.setStatusTip(f"Preset {info.name}: {info.model}, {info.figures}. Source: {info.source}")
    tip = [
        f"<b>{escape(info.model)}</b> (preset <code>{escape(info.name)}</code>)",
        escape(info.figures),
        f"Source: {escape(info.source)}",
    ]
    details = [line for line in info.notes.splitlines() if line and not line.lower().startswith("source:")]
    if details:
        tip.append("<i>" + "<br>".join(escape(line) for line in details) + "</i>")
    action.setToolTip("<br>".join(tip))
    return action


def build_actions(window) -> None:
    """Every action of the window, its File, Compile and Help menus and the presets, grouped by kernel."""
    window.compile_action = _action(window, "&Compile", [QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    window.cancel_action = _action(window, "C&ancel", QKeySequence(Qt.Key.Key_Escape), "Stop the running compile (Esc)")
    window.cancel_action.setEnabled(False)
    window.open_action = _action(
        window, "&Open spec…", QKeySequence.StandardKey.Open, "Load a spec file (TOML or JSON)"
    )
    window.save_action = _action(
        window,
        "&Save spec…",
        QKeySequence.StandardKey.Save,
        "Save the form as a TOML spec, the file `neffbench compile` reads",
    )
    window.workdir_action = _action(window, "Choose &workdir…", None, "Pick the directory that receives the jobs")
    window.explain_action = _action(
        window,
        "&Explain a log…",
        None,
        "Explain any compiler log (or a job's job.log) in the Compile tab, as `neffbench explain` does",
    )
    window.quit_action = _action(window, "&Quit", QKeySequence.StandardKey.Quit)
    window.preset_actions = {name: _preset_action(window, info) for name, info in preset_infos().items()}
    window.sweep_action = _action(
        window,
        "S&weep…",
        QKeySequence("Ctrl+Shift+W"),
        "Compile a grid of values of any fields, here or on a Ray cluster, and compare the points (Ctrl+Shift+W)",
    )
    for i in range(len(TAB_TITLES)):
        tab_action = _action(window, f"Tab {i + 1}", QKeySequence(f"Ctrl+{i + 1}"))
        tab_action.triggered.connect(lambda _checked=False, i=i: window.tabs.setCurrentIndex(i))
    file_menu = window.menuBar().addMenu("&File")
    file_menu.addActions([window.open_action, window.save_action, window.explain_action])
    window.presets_menu = file_menu.addMenu("&Presets")
    window.presets_menu.setToolTipsVisible(True)  # the tooltips carry each preset's source
    # One submenu per kernel; the default kernel's presets, the first and most, stay at the top level.
    submenus: dict[str, QMenu] = {}
    for action in window.preset_actions.values():
        kernel = action.data() or registry.DEFAULT
        if kernel == registry.DEFAULT:
            window.presets_menu.addAction(action)
            continue
        if kernel not in submenus:
            submenus[kernel] = window.presets_menu.addMenu(kernel)
            submenus[kernel].setToolTipsVisible(True)
        submenus[kernel].addAction(action)
    file_menu.addAction(window.workdir_action)
    file_menu.addSeparator()
    file_menu.addAction(window.quit_action)
    window.recompile_action = _action(
        window,
        "&Recompile (ignore the cache)",
        QKeySequence("Ctrl+Shift+Return"),
        "Compile again even where an identical earlier compile succeeded (Ctrl+Shift+Return)",
    )
    compile_menu = window.menuBar().addMenu("&Compile")
    compile_menu.addActions([window.compile_action, window.recompile_action, window.sweep_action, window.cancel_action])
    window.manual_action = _action(window, "&Manual", QKeySequence.StandardKey.HelpContents, "The README, here (F1)")
    window.shortcuts_action = _action(
        window, "&Keyboard shortcuts", [QKeySequence("Ctrl+?"), QKeySequence("Ctrl+/")], "Every shortcut (Ctrl+?)"
    )
    window.about_action = _action(window, "&About NEFF Workbench", None, "Versions, and what the toolchain check found")
    help_menu = window.menuBar().addMenu("&Help")
    help_menu.addActions([window.manual_action, window.shortcuts_action, window.about_action])
    window.toolbar_action = _action(
        window,
        "Go to the toolbar",
        QKeySequence(Qt.Key.Key_F6),
        "Keyboard focus to the toolbar: Compile, Cancel, Sweep, the spec files, Presets and the workdir (F6)",
    )
    for menu in (file_menu, compile_menu, help_menu):
        mnemonics.assign(menu)  # the presets' and kernels' names, which change with the bundled presets


def build_toolbar(window) -> None:
    """The toolbar: Compile and Cancel, spec files, presets and the workdir."""
    bar = window.addToolBar("Main")
    window.toolbar = bar
    bar.setObjectName("mainToolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.addAction(window.compile_action)
    bar.addAction(window.cancel_action)
    bar.addAction(window.sweep_action)
    bar.addSeparator()
    bar.addAction(window.open_action)
    bar.addAction(window.save_action)
    presets = QToolButton()
    presets.setText("Presets")
    presets.setMenu(window.presets_menu)
    presets.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    presets.setToolTip("Fill the form from a bundled model geometry")
    bar.addWidget(presets)
    bar.addSeparator()
    bar.addWidget(QLabel(" Workdir "))
    window.workdir_edit = QLineEdit()
    window.workdir_edit.setObjectName("workdir")
    window.workdir_edit.setMinimumWidth(280)
    window.workdir_edit.setToolTip("Directory that receives one job directory per compile; Artifacts lists it.")
    bar.addWidget(window.workdir_edit)
    bar.addAction(window.workdir_action)
    for action in bar.actions():
        button = bar.widgetForAction(action)
        if isinstance(button, QToolButton):  # a toolbar leaves its buttons out of the Tab chain (tab_order.py)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    compile_button = bar.widgetForAction(window.compile_action)
    compile_button.setObjectName("compileButton")
    font = compile_button.font()
    font.setBold(True)
    compile_button.setFont(font)
