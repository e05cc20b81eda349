"""Colours and plot defaults shared by every widget, so the window and the headless PNGs look alike."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

# Log levels as neuronx-cc and Python's logging name them.
LEVEL_COLOURS = {
    "DEBUG": "#7a7a7a",
    "INFO": None,  # the palette's text colour
    "WARNING": "#a15c00",
    "ERROR": "#c4282d",
    "CRITICAL": "#c4282d",
    "USER": "#1f4e9c",
}
BAND_COLOURS = {"unchanged": "#1f77b4", "interpolated": "#ff7f0e", "blended": "#9467bd"}
GOOD, BAD, WARN = "#2e7d32", "#c62828", "#a15c00"
ORIGINAL, ROTATED = "#8c8c8c", "#1f77b4"
# A compile job's (and a sweep point's) outcome, wherever one is drawn.
JOB_OUTCOME_COLOURS = {"succeeded": GOOD, "failed": BAD, "cancelled": WARN, "interrupted": WARN}
PROBLEM_COLOURS = {"error": BAD, "warning": WARN}


def apply(app: QApplication) -> None:
    """Fusion everywhere: the same look on every desktop, and in screenshots."""
    app.setStyle("Fusion")
    configure_plots(app.palette())


def configure_plots(palette: QPalette | None = None) -> None:
    palette = palette or QApplication.palette()
    pg.setConfigOptions(
        antialias=True,
        imageAxisOrder="row-major",
        background=palette.color(QPalette.ColorRole.Base),
        foreground=palette.color(QPalette.ColorRole.Text),
    )


def badge_style(ok: bool | None) -> str:
    """Stylesheet for a pass/fail badge (None: not known yet)."""
    colour = "#777777" if ok is None else (GOOD if ok else BAD)
    return f"QLabel {{ background: {colour}; color: white; border-radius: 4px; padding: 2px 8px; font-weight: bold; }}"


def colour(name: str) -> QColor:
    return QColor(name)
