"""Asking before a preset, an opened spec or a job's spec replaces edits the user has not saved."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from neffbench.spec import kernel_of

TITLE = "Discard unsaved edits?"


def may_replace(window, spec, what: str) -> bool:
    """Whether ``what`` (``Loading the preset llama3-8b``) may replace the form of ``spec``'s kernel: it holds no
    unsaved edits, or the user chose Discard. Cancel, Esc or closing the box keeps them."""
    form, kernel = window.form, kernel_of(spec)
    if not form.has_unsaved_edits(kernel):
        return True
    box = QMessageBox(
        QMessageBox.Icon.Question,
        TITLE,
        f"The {form.kernel_title(kernel)} form has edits that are not saved. {what} replaces them.",
        QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        window,
    )
    box.setObjectName("discard-edits")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    discard = box.clickedButton() is box.button(QMessageBox.StandardButton.Discard)
    if not discard:
        window.statusBar().showMessage(f"{what}: cancelled; your edits are kept.", 5000)
    return discard
