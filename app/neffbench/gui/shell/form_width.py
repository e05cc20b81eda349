"""The form column's width, one per kernel: what the user left it at, else what the kernel's form asks for.

A kernel whose form needs room (the module kernel's inputs table) widens the column when it is shown;
going back to another kernel gives that kernel's width back, so one wide form never squeezes every tab.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter

from neffbench.gui.forms.contribution import KernelForm


class FormWidths:
    """Remembers the column's width per kernel (in the settings too) and sets it when the kernel changes."""

    def __init__(self, splitter: QSplitter, settings, kernel: str):
        self.splitter = splitter
        self.settings = settings
        self.kernel = kernel

    def width_for(self, kernel: str, form: KernelForm) -> int:
        """The kernel's last width, else its form's ``preferred_width``, never below what the form needs
        nor more than half the window (the tabs keep the rest)."""
        total = sum(self.splitter.sizes())
        wanted = self.settings.number(f"form_width/{kernel}", 0) or form.preferred_width
        pane = self.splitter.widget(0)
        assert pane is not None  # the forms' column
        least = pane.minimumSizeHint().width()
        return max(least, min(wanted, total // 2 if total else wanted))

    def switch(self, kernel: str, form: KernelForm) -> None:
        """``kernel``'s form is now shown: keep the width the last kernel had, give this one its own."""
        sizes = self.splitter.sizes()
        if kernel == self.kernel or not sum(sizes):
            self.kernel = kernel
            return
        self.remember()
        self.kernel = kernel
        width = self.width_for(kernel, form)
        self.splitter.setSizes([width, sum(sizes) - width])

    def remember(self) -> None:
        """The current kernel's width as it is now (on a switch and when the window closes)."""
        sizes = self.splitter.sizes()
        if sum(sizes):
            self.settings.set_number(f"form_width/{self.kernel}", sizes[0])
