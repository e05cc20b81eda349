"""What the window asks of a kernel's Preview panel (``Kernel.gui_preview``), declared once, and the panel made for
a kernel: its own, checked against the declaration when first imported, else the generic one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QSplitter

from neffbench.gui.widgets.kernel_widget import resolved
from neffbench.kernels.api import Kernel

GENERIC = "neffbench.gui.preview.kernel_panel:GenericPreviewPanel"


class PreviewPanel(Protocol):
    """A kernel's Preview tab: made with no arguments, it draws what ``Kernel.preview`` returns (and the CPU check
    of ``neffbench preview --check`` and the Run CPU check button), and asks for things through its signals."""

    bucket_chosen: SignalInstance  # (int) the preview of another bucket, by its value
    check_requested: SignalInstance  # () a CPU check of the spec in the form
    keep_state_requested: SignalInstance  # (list) keep these buffers the forward writes as the module's state

    def show_status(self, text: str, *, error: bool = False) -> None: ...

    def show_invalid(self, message: str) -> None:
        """The spec in the form cannot be previewed (``message`` says why)."""

    def show_preview(self, preview: Any) -> None: ...

    def show_check_running(self) -> None: ...

    def show_check(self, report: dict[str, Any]) -> None:
        """A probe ``check`` report (a panel without a CPU check of its own may ignore it)."""

    def chosen_bucket(self) -> int | None:
        """The bucket (by its value) whose preview the panel asks for; None: the spec's first."""

    def splitters(self) -> dict[str, QSplitter]:
        """The splitters whose sizes the window keeps across sessions, by a suffix of the panel's own ("")."""

    def save_images(
        self, out: Path, preview: Any, *, report: dict[str, Any] | None = None, **options: Any
    ) -> list[Path]:
        """Draw ``preview`` (and ``report``) and save PNGs in ``out`` (``neffbench preview``); ``options`` are the
        kernel's ``cli.preview_options``."""


def preview_panel(kernel: Kernel) -> PreviewPanel:
    """A new Preview panel for ``kernel``: its own (``gui_preview``), else the generic one."""
    return resolved(kernel, kernel.gui_preview or GENERIC, PreviewPanel)()  # type: ignore[return-value]
