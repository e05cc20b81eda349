"""Spec documents into and out of the form: a preset loaded, a spec file opened, the form saved as one; a preset or a
file replaces a form's unsaved edits only when the user says so (``discard.may_replace``). The window's
``apply_preset``, ``open_spec`` and ``save_spec`` are these."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from neffbench.gui.shell.discard import may_replace
from neffbench.presets import load_preset
from neffbench.spec import SpecError, load_partial, save
from neffbench.words import plural


def apply_preset(window, name: str) -> bool:
    """Load a preset into its kernel's form (asking first when that form holds unsaved edits)."""
    spec = load_preset(name)
    if not may_replace(window, spec, f"Loading the preset {name}"):
        return False
    window.form.set_spec(spec)
    window.statusBar().showMessage(f"Preset {name} loaded; the workdir is unchanged.", 5000)
    return True


def open_spec(window, path: str | Path) -> bool:
    """Open a spec file; values it holds that no spec can (wrong types, unknown keys) show under their fields.
    False when it cannot be opened, or the user kept the unsaved edits it would replace."""
    try:
        spec, held = load_partial(path)
        if not may_replace(window, spec, f"Opening {Path(path).name}"):
            return False
        window.form.set_spec(spec, held=held)
    except SpecError as exc:
        QMessageBox.warning(window, "Cannot open spec", str(exc))
        return False
    said = f" with {plural(len(held), 'value')} it could not take, listed in the form" if held else ""
    window.statusBar().showMessage(f"Opened {path}{said}; the workdir is unchanged.", 5000)
    return True


def save_spec(window, path: str | Path) -> Path:
    """Save the window's spec (``current_spec``) at ``path``; the form's edits count as saved from then on."""
    saved = save(window.current_spec(), path)
    window.form.mark_saved()
    window.statusBar().showMessage(f"Saved {saved}", 5000)
    return saved
