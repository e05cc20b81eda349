"""The Help menu's windows: the manual (the README, section by section), the keyboard shortcuts (read from the
window's own actions and buttons, so the sheet never goes stale) and About (versions, what doctor found)."""

from __future__ import annotations

import importlib.metadata
import platform
from html import escape

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QHeaderView,
    QListWidget,
    QMessageBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from neffbench import __version__, manual

WINDOW_SECTION = "The window"


class ManualWindow(QWidget):
    """The README's sections on the left, the chosen one on the right."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("manualWindow")
        self.setWindowTitle("NEFF Workbench manual")
        self.sections = manual.sections(manual.text())
        self.index = QListWidget()
        self.index.addItems(list(self.sections))
        self.page = QTextBrowser(openExternalLinks=True)
        splitter = QSplitter()
        splitter.addWidget(self.index)
        splitter.addWidget(self.page)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 760])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.index.currentTextChanged.connect(self._on_index_current_text_changed)
        self.resize(1000, 680)

    def show_section(self, title: str) -> None:
        found = self.index.findItems(title, Qt.MatchFlag.MatchExactly)
        self.index.setCurrentItem(found[0] if found else self.index.item(0))
        self.show()
        self.raise_()
        self.activateWindow()

    def _on_index_current_text_changed(self, title: str) -> None:
        self.page.setMarkdown(self.sections.get(title, "") or "The manual (README.md) is not installed here.")


def show_manual(window: QWidget) -> ManualWindow:
    """The window's manual (made on first use), at the section about the window."""
    manual = window.findChild(ManualWindow, "manualWindow") or ManualWindow(window)
    manual.show_section(WINDOW_SECTION)
    return manual


def shortcuts(window: QWidget) -> list[tuple[str, str]]:
    """(what, keys) for every action and button of ``window`` that has a shortcut, in the order they were made."""
    rows: dict[str, str] = {}
    for action in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        if keys and action.text():
            rows.setdefault(action.text().replace("&", ""), ", ".join(keys))
    for button in window.findChildren(QAbstractButton):
        key = button.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if key and button.text():
            rows.setdefault(button.text().replace("&", ""), key)
    return list(rows.items())


def show_shortcuts(window: QWidget) -> QDialog:
    dialog = QDialog(window)
    dialog.setWindowTitle("Keyboard shortcuts")
    dialog.setObjectName("shortcutsDialog")
    rows = shortcuts(window)
    table = QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels(["Action", "Keys"])
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    for row, (what, keys) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(what))
        table.setItem(row, 1, QTableWidgetItem(keys))
    table.resizeColumnToContents(1)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    dialog.resize(520, 560)
    dialog.show()
    return dialog


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def about_text(facts=None, status: list[str] | None = None) -> str:
    """Versions of the workbench and what it stands on, and (once gathered) what ``neffbench doctor`` found: the
    status bar's lines (``status``) whole, and its advice."""
    rows = [
        ("NEFF Workbench", __version__),
        ("Python", platform.python_version()),
        ("Qt / PySide6", f"{qVersion()} / {pyside_version}"),
        *((name, _version(name)) for name in ("pyqtgraph", "numpy", "torch")),
    ]
    if facts is not None:
        rows += [
            ("torch-neuronx", facts.torch_neuronx.version or "not found"),
            ("neuronx-cc", facts.neuronx_cc.version or "not found"),
            ("Neuron devices", ", ".join(facts.devices) or "none"),
        ]
    table = "".join(f"<tr><td>{escape(k)}</td><td><b>{escape(str(v))}</b></td></tr>" for k, v in rows)
    found = ""
    if facts is not None:
        from neffbench.doctor import advice

        lines = "".join(f"<li>{escape(line.removeprefix('● '))}</li>" for line in status or [])
        said = "".join(f"<li>{escape(sentence)}</li>" for sentence in advice(facts))
        found = (f"<p><b>Status bar</b></p><ul>{lines}</ul>" if lines else "") + (
            f"<p><b>What <code>neffbench doctor</code> found</b></p><ul>{said}</ul>"
        )
    pending = "" if facts is not None else "<p><i>The toolchain check is still running.</i></p>"
    return f"<p>Turns PyTorch code into AWS Neuron NEFF executables.</p><table>{table}</table>{found}{pending}"


def show_about(window: QWidget, facts=None, status: list[str] | None = None) -> None:
    QMessageBox.about(window, "About NEFF Workbench", about_text(facts, status))
