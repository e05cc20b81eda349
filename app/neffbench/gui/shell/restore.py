"""What the window keeps between sessions: geometry, splitters, the workdir, each kernel's last spec (and what its form
knew besides, such as the module form's Resolve), the log's wrapping and the tab."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter, QStyle

from neffbench.gui.shell.tabs import DEFAULT_PRESET, PREVIEW_TAB, RUN_TAB
from neffbench.presets import load_preset
from neffbench.spec import SpecError, anchored_here, kernel_of, loads_toml


def first_size(window) -> QSize:
    """1500x940 on a screen that has room, else what the screen has less the window manager's frame: a first launch
    on a laptop fits it, its status bar on screen."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    room = screen.availableGeometry() if screen is not None else None
    if room is None or room.isEmpty():
        return QSize(1500, 940)
    frame = frame_allowance(window)
    return QSize(min(1500, room.width() - frame.width()), min(940, room.height() - frame.height()))


def frame_allowance(window) -> QSize:
    """Room for a title bar and borders: their real size is known only once a window manager has framed the window,
    after it is shown, too late for a first size (title bars are about two lines of text high)."""
    style = window.style()
    border = 2 * style.pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth)
    title = max(style.pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight), 2 * window.fontMetrics().height())
    return QSize(border, title + border)


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
    specs, current = _specs(s)
    if current not in specs:
        current = kernel_of(load_preset(DEFAULT_PRESET))
        specs[current] = load_preset(DEFAULT_PRESET)
    unsaved = {name for name in specs if s.number(f"spec/{name}/unsaved", 0)}
    states = {name: _state(s.text(f"spec/{name}/state")) for name in specs}
    window.form.restore(specs, current, unsaved=unsaved, states=states)
    window.tabs.setCurrentIndex(max(0, min(RUN_TAB, s.number("window/tab", PREVIEW_TAB))))


def _specs(s) -> tuple[dict, str]:
    """Each kernel's last spec and the kernel shown (a session before kernels kept its spec alone, and one that no
    longer loads is left out: its kernel starts from its default, the window from the preset)."""
    kernels = [k for k in s.text("spec/kernels").split(",") if k]
    texts = {k: s.text(f"spec/{k}/toml") for k in kernels} if kernels else {"": s.text("spec/toml")}
    specs = {}
    for text in texts.values():
        try:
            spec = loads_toml(text, "the last spec") if text else None
        except SpecError:
            spec = None
        if spec is not None:
            specs[kernel_of(spec)] = spec
    current = s.text("spec/kernel") or next(iter(specs), "")
    return specs, current


def _state(text: str) -> dict:
    try:
        state = json.loads(text) if text else {}
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def restore_panels(window) -> None:
    """What the tabs' panels keep, once each as they are built (after the window, a kernel's preview panel when its
    kernel is first shown): their splitters' sizes, the log's wrapping."""
    for key, splitter in window._splitters().items():
        if key not in window.restored:
            window.restored.add(key)
            state = window.settings.bytes(f"splitter/{key}")
            if state is not None:
                splitter.restoreState(state)
    if window.panels_ready and "log/wrap" not in window.restored:
        window.restored.add("log/wrap")
        window.panels.compile.log_view.wrap_check.setChecked(bool(window.settings.number("log/wrap", 0)))


def splitters(window) -> dict[str, QSplitter]:
    """The splitters whose sizes persist, by settings key (the panels' only once they are built)."""
    preview = window.preview_stack.splitters() if window.preview_stack is not None else {}
    if not window.panels_ready:
        return preview
    out = {
        "compile": window.panels.compile.splitter,
        "compile_results": window.panels.compile.vsplitter,
        "log": window.panels.compile.log_view.splitter,
        "artifacts": window.panels.artifacts.splitter,
        "artifacts_job": window.panels.artifacts.job_splitter,
        "numerics": window.panels.numerics.splitter,
        "numerics_lower": window.panels.numerics.lower,
        "sweeps": window.panels.sweeps.panel.splitter,
        "sweeps_lower": window.panels.sweeps.panel.lower,
    }
    if isinstance(getattr(window.panels.run, "splitter", None), QSplitter):
        out["run"] = window.panels.run.splitter
    return {**out, **preview}


def save(window) -> None:
    s = window.settings
    s.set_bytes("window/geometry", window.saveGeometry())
    s.set_bytes("window/state", window.saveState())
    s.set_bytes("splitter/main", window.splitter.saveState())
    window.form_widths.remember()
    for key, splitter in splitters(window).items():
        s.set_bytes(f"splitter/{key}", splitter.saveState())
    s.set_text("workdir", str(window.workdir))
    s.set_text("spec/toml", spec_text(window))  # the spec shown, also where a version before kernels' specs looks
    specs, states, unsaved = window.form.specs(), window.form.states(), window.form.unsaved_kernels()
    s.set_text("spec/kernels", ",".join(specs))
    s.set_text("spec/kernel", window.form.kernel)
    for name, spec in specs.items():
        s.set_text(f"spec/{name}/toml", _toml(window, spec))
        s.set_number(f"spec/{name}/unsaved", name in unsaved)
        s.set_text(f"spec/{name}/state", json.dumps(states.get(name) or {}))
    if window.panels_ready:
        s.set_number("log/wrap", window.panels.compile.log_view.wrap_check.isChecked())
    s.set_number("window/tab", window.tabs.currentIndex())
    s.sync()


def spec_text(window) -> str:
    return _toml(window, window.form.spec())


def _toml(window, spec) -> str:
    from neffbench.spec import dumps_toml

    # Its paths absolute, as a compile would read them; exactly back on restart.
    return dumps_toml(dataclasses.replace(anchored_here(spec), workdir=str(window.workdir)), mark_ignored=False)
