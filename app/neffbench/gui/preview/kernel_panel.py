"""The Preview tab for every kernel but RoPE: the kernel's own plots and badges, and the CPU check report.

Presents only: the preview comes from a kernel's ``preview()`` (run off the GUI thread by whoever calls
``show_preview``) and the report from the probe child's ``check``. Imports no torch, because the window
builds this panel before torch has loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from superqt import QElidingLabel, QFlowLayout

from neffbench.gui.preview.check import CheckView, verdict
from neffbench.gui.preview.plots import PlotGrid, PlotScroll
from neffbench.gui.widgets import theme

if TYPE_CHECKING:
    import pyqtgraph as pg

    from neffbench.kernels.plots import KernelPreview

VERDICT_TIPS = {
    True: "Within what the workbench accepts.",
    False: "Outside what the workbench accepts.",
    None: "For information: no pass or fail.",
}


class GenericPreviewPanel(QWidget):
    """Presents a KernelPreview and a CPU check report; asks for a check through ``check_requested``, and to keep
    the buffers the forward writes as state through ``keep_state_requested``. It offers no choice of bucket (the
    preview is the spec's first), so it never emits ``bucket_chosen``."""

    scroll: PlotScroll  # type: ignore[assignment]  # shadows QWidget.scroll(), never called on this panel

    bucket_chosen = Signal(int)
    check_requested = Signal()
    keep_state_requested = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.preview: KernelPreview | None = None
        self.title_label = QLabel()
        self.title_label.setStyleSheet("font-weight: bold;")
        self.status_label = QElidingLabel("Loading torch…")
        self.status_label.setObjectName("previewStatus")
        # Errors (a spec that cannot be previewed) get a full-width line of their own: they are sentences.
        self.message_label = QLabel(wordWrap=True, visible=False)
        self.message_label.setStyleSheet(f"color: {theme.BAD};")
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.check_button = QPushButton("Run CPU &check")
        self.check_button.setToolTip(
            "Build the kernel, run it eagerly and trace it on the CPU in a child process: "
            "its tensors, the NEFF interface it will have, its operators and any problem "
            "a compile would hit, without running the compiler."
        )
        self.badges: dict[str, QLabel] = {}
        self.badge_box = QWidget()
        self.badge_layout = QFlowLayout(self.badge_box)
        self.badge_layout.setContentsMargins(0, 0, 0, 0)
        self.grid = PlotGrid()
        self.scroll = PlotScroll(self.grid)
        # Until the first preview arrives (torch is still loading) a sentence beats empty plots.
        self.placeholder = QLabel(
            "Loading torch in the background…\nThe kernel's plots appear here as soon as it is ready.",
            alignment=Qt.AlignmentFlag.AlignCenter,
            wordWrap=True,
        )
        self.placeholder.setStyleSheet(f"color: {theme.ORIGINAL}; font-size: 14pt;")
        self.plots_stack = QStackedWidget()
        self.plots_stack.addWidget(self.placeholder)
        self.plots_stack.addWidget(self.scroll)
        self.check_view = CheckView()
        self.tabs = QTabWidget(documentMode=True)
        self.tabs.addTab(self.plots_stack, "&Kernel plots")
        self.tabs.addTab(self.check_view, "CPU check")
        self._layout()
        self.check_button.clicked.connect(self._on_check_button_clicked)
        self.check_view.keep_state_requested.connect(self.keep_state_requested)

    def _layout(self) -> None:
        header = QHBoxLayout()
        header.addWidget(self.title_label)
        header.addSpacing(8)
        header.addWidget(self.status_label, 1)
        header.addWidget(self.check_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(header)
        layout.addWidget(self.message_label)
        layout.addWidget(self.badge_box)
        layout.addWidget(self.tabs, 1)

    @property
    def check_label(self) -> QLabel:
        """Which bucket the last check ran for and how long it took."""
        return self.check_view.check_label

    def plot_widgets(self) -> dict[str, pg.PlotWidget]:
        """The PlotWidget of each plot shown, by plot title."""
        return {title: self.grid.cells[title].plot_widget for title in self.grid.order}

    def chosen_bucket(self) -> int | None:
        return None

    def splitters(self) -> dict[str, QSplitter]:
        return {}

    # ---- what the controller reports ----

    def show_status(self, text: str, *, error: bool = False) -> None:
        if self.preview is None:
            # An error is listed once, above; the empty plots' place says only what brings them.
            self.placeholder.setText("No preview until the problems above are fixed." if error else text)
        self.status_label.setText("" if error else text)
        self.message_label.setText(text if error else "")
        self.message_label.setVisible(error)

    def show_invalid(self, message: str) -> None:
        """The form's spec cannot be previewed: say so, keep the old plots, and let no badge vouch for them."""
        shown = f" (the plots show {self.preview.title}, the last valid spec)" if self.preview is not None else ""
        for label in self.badges.values():
            label.setStyleSheet(theme.badge_style(None))
            label.setToolTip("From the last valid spec: not checked for the spec in the form.")
        self.show_status(f"No preview{shown}: {message}", error=True)

    def show_preview(self, preview: KernelPreview) -> None:
        self.preview = preview
        self.plots_stack.setCurrentWidget(self.scroll)
        self.title_label.setText(preview.title)
        self.grid.set_plots(preview.plots)
        self._set_badges(preview.badges, preview.verdicts)
        timings = preview.timings or {}
        seconds = timings.get("total", sum(timings.values()))
        self.show_status(f"computed in {seconds * 1e3:.0f} ms" if timings else "")

    def save_images(
        self, out, preview: KernelPreview | None, *, report: dict[str, Any] | None = None, **_options: Any
    ) -> list:
        """Draw ``preview`` and ``report`` and save PNGs in ``out`` (``neffbench preview``): the plots tab,
        each plot on its own, and the CPU-check tab when there is a report."""
        from pathlib import Path

        out = Path(out)
        paths = []

        def save(widget: QWidget, stem: str) -> None:
            path = out / f"{stem}.png"
            if not widget.grab().save(str(path)):
                raise OSError(f"could not write {path}")
            paths.append(path)

        if preview is None:
            self.show_status("This kernel has no preview of its own; its CPU check follows.")
        else:
            self.show_preview(preview)
            self.tabs.setCurrentIndex(0)
            self.ensurePolished()
            layout = self.layout()
            assert layout is not None  # made with the panel
            layout.activate()
            save(self, "preview")
            for i, widget in enumerate(self.plot_widgets().values()):
                save(widget, f"plot-{i + 1}")
        if report is not None:
            self.show_check(report)
            self.ensurePolished()
            layout = self.layout()
            assert layout is not None  # made with the panel
            layout.activate()
            save(self, "check")
        return paths

    def show_check_running(self, text: str = "Running the CPU check in a child process…") -> None:
        self.check_view.show_running(text)
        self.tabs.setTabText(1, "CPU check")

    def show_check(self, report: dict[str, Any], *, reveal: bool = True) -> None:
        """A probe ``check`` report; ``reveal`` brings the CPU check tab to the front."""
        self.check_view.show_report(report)
        ok, errors, _warnings = verdict(report)
        failed = f"{len(errors)} error{'s' if len(errors) > 1 else ''}" if errors else "failed"
        self.tabs.setTabText(1, f"CPU check · {'passed' if ok else failed}")
        if reveal:
            self.tabs.setCurrentWidget(self.check_view)

    def _set_badges(self, badges: dict[str, str], verdicts: dict[str, bool | None]) -> None:
        if list(badges) != list(self.badges):
            for label in self.badges.values():
                self.badge_layout.removeWidget(label)
                label.deleteLater()
            self.badges = {name: QLabel() for name in badges}
            for label in self.badges.values():
                self.badge_layout.addWidget(label)
        for name, value in badges.items():
            verdict = verdicts.get(name)
            label = self.badges[name]
            label.setText(f"{name}: {value}")
            label.setStyleSheet(theme.badge_style(verdict))
            label.setToolTip(VERDICT_TIPS[verdict])
        self.badge_box.setVisible(bool(badges))

    # ---- slots ----

    def _on_check_button_clicked(self) -> None:
        self.check_requested.emit()
