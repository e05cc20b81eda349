"""Opening a file or folder with the desktop's own application, and saying so when there is none.

Without a launcher (no ``xdg-open`` handler, a bare X server, a container) Qt only prints "Unable
to detect a launcher" and nothing happens; the user gets the path to copy instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMessageBox, QWidget


def no_launcher(parent: QWidget | None, path: str) -> None:
    box = QMessageBox(
        QMessageBox.Icon.Information,
        "Nothing to open it with",
        f"This desktop has no application registered to open\n{path}\n(no launcher such as "
        "xdg-open answered). Copy the path and open it yourself.",
        parent=parent,
    )
    copy = box.addButton("Copy path", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Close)
    box.exec()
    if box.clickedButton() is copy:
        QGuiApplication.clipboard().setText(path)


def open_path(
    path: str | Path,
    parent: QWidget | None = None,
    *,
    tell: Callable[[str], object] | None = None,
    fallback: Callable[[QWidget | None, str], object] = no_launcher,
) -> bool:
    """Open ``path`` with the desktop; without a launcher, offer the path to copy. True when it opened."""
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
    if opened:
        if tell is not None:
            tell(f"Opened {path}")
        return True
    if tell is not None:
        tell(f"No application to open {path}: its path is offered to copy")
    fallback(parent, str(path))
    return False
