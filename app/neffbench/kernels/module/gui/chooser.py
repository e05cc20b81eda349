"""Open .py…'s second step: the classes, functions and objects a file defines (read with ast), one to pick."""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from neffbench.kernels.module.gui.report import entry_choices

_KINDS = {
    "class": "class: its constructor's arguments become the form's fields",
    "function": "function: a factory that returns the module, or the forward itself",
    "object": "object: a module (or function) the file makes when it is loaded",
}


class EntryChooser(QDialog):
    """Lists ``choices`` (from ``report.entry_choices``) of ``path``; ``entry()`` is ``path:NAME`` once accepted."""

    def __init__(
        self, path: str, choices: list[dict[str, Any]], parent: QWidget | None = None, *, preselect: str | None = None
    ):
        super().__init__(parent)
        self.path = path
        name = Path(path).name
        self.setWindowTitle(f"Choose what in {name} to compile")
        self.setObjectName("entry-chooser")
        intro = QLabel(
            f"<b>{html.escape(name)}</b> defines these at its top level (read, not run: the window never "
            "imports your code). Pick the module to compile; Resolve then reads its signature in a child process."
        )
        intro.setWordWrap(True)
        self.list = QListWidget(objectName="entry-choices", wordWrap=True)  # type: ignore[call-arg]  # a Qt property keyword
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # long docs wrap
        for choice in choices:
            doc = _plain(choice.get("doc") or "")
            item = QListWidgetItem(
                f"{choice['name']}   ({choice['kind']}, line {choice['line']})" + (f" — {doc}" if doc else "")
            )
            item.setData(Qt.ItemDataRole.UserRole, choice["name"])
            item.setToolTip(_KINDS.get(choice["kind"], choice["kind"]))
            self.list.addItem(item)
        self.list.setCurrentRow(0 if choices else -1)
        if preselect:
            self.choose(preselect)  # the top-level module: what a user compiles most often
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.choose_button = self.buttons.addButton("Use this entry", QDialogButtonBox.ButtonRole.AcceptRole)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.list.itemActivated.connect(lambda _item: self.accept())
        self.list.currentRowChanged.connect(lambda row: self.choose_button.setEnabled(row >= 0))
        self.resize(560, 360)

    def choose(self, name: str) -> None:
        """Select ``name`` (what a click does)."""
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == name:
                self.list.setCurrentRow(row)
                return
        raise KeyError(name)

    def entry(self) -> str:
        item = self.list.currentItem()
        return f"{self.path}:{item.data(Qt.ItemDataRole.UserRole)}" if item is not None else f"{self.path}:"


def _plain(doc: str) -> str:
    """A docstring's first line without reST markup (``:class:`MLP` `` reads ``MLP``)."""
    return re.sub(r":\w+:`([^`]*)`", r"\1", doc).replace("``", "").replace("`", "")


class FileOpener(QObject):
    """Open .py…: the file dialog, the file's names read on a worker thread, then the chooser.

    ``listed(path, names)`` as soon as the names are read (completions for the entry); then ``chosen(entry)``
    when one is picked (at once, with no chooser, when the file defines one module class), or
    ``unlisted(path, why)`` when the file lists nothing to pick. Cancel leaves the entry
    as it was. ``start(func, *args, **callbacks)`` runs ``func`` off the GUI thread (the form counts its tasks)."""

    listed = Signal(str, list)
    chosen = Signal(str)
    unlisted = Signal(str, str)

    def __init__(self, parent: QWidget, start: Any):
        super().__init__(parent)
        self._parent, self._start = parent, start
        self.chooser: EntryChooser | None = None

    def ask(self, current_entry: str) -> None:
        current = current_entry.rpartition(":")[0]
        start = str(Path(current).parent) if current.endswith(".py") else str(Path.cwd())
        path, _ = QFileDialog.getOpenFileName(
            self._parent, "Choose the Python file to compile", start, "Python files (*.py);;All files (*)"
        )
        if path:
            self.read(path)

    def read(self, path: str) -> None:
        """List what ``path`` defines (off the GUI thread), then offer the chooser."""
        self._start(entry_choices, path, returned=functools.partial(self._on_read, path), errored=self._on_failed)

    def _on_read(self, path: str, found: dict[str, Any]) -> None:
        names = found["names"]
        self.listed.emit(path, [n["name"] for n in names])
        if not names:
            self.unlisted.emit(path, f"{found['error']} Type the name to compile after the ':'.")
            return
        if len(found["modules"]) == 1:
            self.chosen.emit(f"{path}:{found['modules'][0]}")  # nothing to choose between; the rest are completions
            return
        if self.chooser is not None:
            self.chooser.deleteLater()  # the last file's
        self.chooser = EntryChooser(path, names, self._parent, preselect=found["top"])
        self.chooser.accepted.connect(self._on_chooser_accepted)
        self.chooser.open()  # window-modal, without a nested event loop

    def _on_failed(self, exc: Exception) -> None:
        self.unlisted.emit("", f"The file could not be read: {exc}")

    def _on_chooser_accepted(self) -> None:
        if self.chooser is not None:
            self.chosen.emit(self.chooser.entry())
