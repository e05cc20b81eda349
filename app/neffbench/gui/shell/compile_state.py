"""Whether Compile, Recompile and Sweep can start, and the Compile button's tooltip saying why or why not."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QToolBar, QWidget

from neffbench.backends import registry as backends
from neffbench.gui.forms import field_words

# ``window`` is the MainWindow, which imports this module: naming its type here would be an import circle.

SHOWN_ERRORS = 6  # in the tooltip; the rest counted


def compile_button(window: Any) -> QWidget | None:
    """The toolbar's Compile button (None once the toolbar is gone), asked of the toolbar each time: a reference
    kept from when the toolbar was built has been found invalid in a window still showing the button."""
    bar = window.findChild(QToolBar, "mainToolbar")
    return bar.widgetForAction(window.compile_action) if bar is not None else None


def tooltip(window: Any, errors: list, running: bool) -> str:
    if not window.panels_ready:
        return "Starting up…"
    if running:
        return "A compile or sweep is running; Cancel (Esc) stops it."
    if errors:
        words = field_words.labels(window.form.spec())
        lines = [f"• {field_words.problem_text(p, words)}" for p in errors[:SHOWN_ERRORS]]
        more = f"\n… and {len(errors) - SHOWN_ERRORS} more" if len(errors) > SHOWN_ERRORS else ""
        return f"Fix {len(errors)} error{'s' if len(errors) > 1 else ''} in the form first:\n" + "\n".join(lines) + more
    if window.form.memory.refused():
        return window.form.memory.sentence()
    what = " (cpu-check: a CPU trace, no NEFF)" if backends.makes_no_neff(window.doctor_status.backend) else ""
    return f"Compile every bucket of the spec{what} (Ctrl+Return)"


def update(window: Any) -> None:
    """Enable the actions for the form's state and say why on the Compile action and its button."""
    errors = window.form.errors()
    running = window.panels_ready and window.busy
    window.sweep_action.setEnabled(window.panels_ready and not running and not errors)
    window.compile_action.setEnabled(window.sweep_action.isEnabled() and not window.form.memory.refused())
    window.recompile_action.setEnabled(window.compile_action.isEnabled())
    tip = tooltip(window, errors, running)
    window.compile_action.setToolTip(tip)
    if (button := compile_button(window)) is not None:
        button.setToolTip(tip)
