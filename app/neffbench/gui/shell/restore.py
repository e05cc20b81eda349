"""What the window keeps between sessions: geometry, splitters, the workdir, the last spec and tab."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter

from neffbench.gui.shell.tabs import DEFAULT_PRESET, PREVIEW_TAB, RUN_TAB
from neffbench.presets import load_preset
from neffbench.spec import SpecError, loads_toml


def first_size(window) -> QSize:
    """1500x940 on a screen that has room, else what the screen has (a first launch on a laptop fits it)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    room = screen.availableGeometry() if screen is not None else None
    if room is None or room.isEmpty():
        return QSize(1500, 940)
    return QSize(min(1500, room.width()), min(940, room.height()))


def restore(window) -> None:
    """Geometry, splitters, workdir, the last spec and tab, as the last session left them."""

    s = window.settings
    geometry = s.bytes("window/geometry")
    if geometry is None or not window.restoreGeometry(geometry):
        window.resize(first_size(window))
    state = s.bytes("window/state")
    if state is not None:
        window.restoreState(state)
    main = s.bytes("splitter/main")
    if main is not None:
        window.splitter.restoreState(main)
    workdir = s.text("workdir")
    window.set_workdir(Path(workdir) if workdir else window.workdir, rescan=False)
    spec = None
    text = s.text("spec/toml")
    if text:
        try:
            spec = loads_toml(text, "the last spec")
        except SpecError:
            spec = None  # a spec from an older version that no longer loads: start from the preset
    window.form.set_spec(spec or load_preset(DEFAULT_PRESET))
    window.tabs.setCurrentIndex(max(0, min(RUN_TAB, s.number("window/tab", PREVIEW_TAB))))


def splitters(window) -> dict[str, QSplitter]:
    """The splitters whose sizes persist, by settings key (the panels' only once they are built)."""
    if not window.panels_ready:
        return {}
    out = {
        "compile": window.compile_panel.splitter,
        "compile_results": window.compile_panel.vsplitter,
        "log": window.compile_panel.log_view.splitter,
        "artifacts": window.artifacts.splitter,
    }
    if isinstance(getattr(window.run_panel, "splitter", None), QSplitter):
        out["run"] = window.run_panel.splitter
    return {**out, **window.preview_stack.splitters()}


def save(window) -> None:
    s = window.settings
    s.set_bytes("window/geometry", window.saveGeometry())
    s.set_bytes("window/state", window.saveState())
    s.set_bytes("splitter/main", window.splitter.saveState())
    window.form_widths.remember()
    for key, splitter in splitters(window).items():
        s.set_bytes(f"splitter/{key}", splitter.saveState())
    s.set_text("workdir", str(window.workdir))
    s.set_text("spec/toml", spec_text(window))
    s.set_number("window/tab", window.tabs.currentIndex())
    s.sync()


def spec_text(window) -> str:
    from neffbench.spec import dumps_toml

    return dumps_toml(window.current_spec(), mark_ignored=False)  # exactly back on restart
