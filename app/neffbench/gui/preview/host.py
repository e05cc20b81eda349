"""The Preview tab: one panel per kernel (the kernel's own, or the generic one), shown for the kernel in the form.

It routes what the preview controller reports to the panel on show, and turns the panels' requests
(another bucket, a CPU check) into signals the window wires to the controller.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QSplitter, QStackedWidget, QWidget

from neffbench.gui.preview.contribution import PreviewPanel, preview_panel
from neffbench.gui.preview.controller import NO_PREVIEW
from neffbench.gui.widgets import wheel
from neffbench.kernels import registry


class PreviewHost(QStackedWidget):
    bucket_chosen = Signal(int)
    check_requested = Signal()
    keep_state_requested = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.panels: dict[str, PreviewPanel] = {}
        self.kernel: str | None = None

    @property
    def panel(self) -> PreviewPanel:
        assert self.kernel is not None  # show_kernel follows the host's making
        return self.panels[self.kernel]

    def show_kernel(self, name: str) -> PreviewPanel:
        """The kernel's panel, built on first use, brought to the front."""
        if name not in self.panels:
            panel = preview_panel(registry.get(name))
            assert isinstance(panel, QWidget)  # every Preview panel is a widget
            panel.bucket_chosen.connect(self.bucket_chosen)
            panel.check_requested.connect(self.check_requested)
            panel.keep_state_requested.connect(self.keep_state_requested)
            self.panels[name] = panel
            self.addWidget(panel)
            wheel.guard_all(panel)  # a kernel's own panel too: its token and head boxes
        self.kernel = name
        shown = self.panels[name]
        assert isinstance(shown, QWidget)
        self.setCurrentWidget(shown)
        return shown

    def chosen_bucket(self) -> int | None:
        return self.panel.chosen_bucket()

    def splitters(self) -> dict[str, QSplitter]:
        """Each panel's splitters, to persist (the default kernel's under the keys they always had)."""
        out = {}
        for name, panel in self.panels.items():
            prefix = "preview" if name == registry.DEFAULT else f"preview_{name}"
            for suffix, splitter in panel.splitters().items():
                out[prefix + suffix] = splitter
        return out

    # ---- what the controller reported ----

    def show_computing(self) -> None:
        self.panel.show_status("Updating the preview…")

    def show_result(self, preview: Any) -> None:
        if preview is None:
            self.panel.show_status(NO_PREVIEW)
        else:
            self.panel.show_preview(preview)

    def show_invalid(self, message: str) -> None:
        self.panel.show_invalid(message)

    def show_check_running(self) -> None:
        self.panel.show_check_running()

    def show_check(self, report: dict) -> None:
        self.panel.show_check(report)
