"""The File menu's dialogs: open a spec, save the form as one, choose the workdir; each hands what was chosen to
the window's own operation (``open_spec``, ``save_spec``, ``set_workdir``)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog


def open_spec(window) -> None:
    path, _ = QFileDialog.getOpenFileName(
        window, "Open spec", str(window.workdir.parent), "Spec files (*.toml *.json);;All files (*)"
    )
    if path:
        window.open_spec(path)


def save_spec(window) -> None:
    suggested = str(window.workdir.parent / f"{window.form.spec().name}.toml")
    path, _ = QFileDialog.getSaveFileName(window, "Save spec", suggested, "TOML spec (*.toml);;JSON spec (*.json)")
    if path:
        window.save_spec(path)


def choose_workdir(window) -> None:
    path = QFileDialog.getExistingDirectory(window, "Choose workdir", str(window.workdir))
    if path:
        window.set_workdir(path)
