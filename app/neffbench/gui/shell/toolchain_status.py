"""Status-bar summary of what ``neffbench doctor`` finds: toolchain, the backend a compile will use, devices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QMouseEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar, QWidget

from neffbench.backends.registry import LABELS as BACKEND_LABELS
from neffbench.gui.widgets import theme

if TYPE_CHECKING:
    from neffbench.gui.widgets.background import Task

# Short, for the status bar (its permanent widgets count in the window's minimum width); the tooltip has
# the backends' whole labels and the reason.
_NAMES = {"native": "TorchNeuron", "legacy": "torch_neuronx"}
_FLAVOURS = {"legacy": " (legacy)"}
# The summary's share of the status bar at most: the rest, on its left, is where messages show.
SHARE = 0.6
SPACING = 16
CLICK = "Click for the whole check (also Help ▸ About)."


def _gather():
    from neffbench.toolchain import host

    return host.gather()


class FittedLabel(QLabel):
    """A status item that gives way on a narrow window: its whole line where it fits, else its short form, and only
    on a window narrower than any laptop's the short form cut with …. ``text()`` is the whole line, ``shown()`` what
    is on screen; the tooltip and the detail a click opens always have the whole line."""

    def __init__(self, text: str = ""):
        super().__init__()
        self._full = self._short = ""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str, short: str | None = None) -> None:  # noqa: N802 - Qt's name
        self._full, self._short = text, text if short is None else short
        self.updateGeometry()
        self._fit()

    def text(self) -> str:
        return self._full

    def shown(self) -> str:
        return super().text()

    def _advance(self, text: str) -> int:
        return self.fontMetrics().horizontalAdvance(text) + 8

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self._advance(self._full), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        # The layout gives each item its short form before any item its whole line.
        return QSize(self._advance(self._short), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        room = max(0, self.width())
        for text in (self._full, self._short):
            if self._advance(text) <= room:
                super().setText(text)
                return
        super().setText(self.fontMetrics().elidedText(self._short, Qt.TextElideMode.ElideRight, room))


class DoctorStatus(QWidget):
    """Three labels; gathering takes seconds (it probes the toolchain in a child), so it runs on a worker. A click
    (or Help ▸ About, by keyboard) asks for the whole check: ``details_requested``."""

    gathered = Signal(object)  # neffbench.toolchain.facts.Facts
    details_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.facts = None
        self.backend: str | None = None
        self.backend_reason = ""
        self.toolchain = FittedLabel("Checking for the Neuron toolchain…")
        self.backend_label = FittedLabel()
        self.device = FittedLabel()
        for label in self.items():
            label.setParent(self)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._worker: Task | None = None

    def items(self) -> list[FittedLabel]:
        return [self.toolchain, self.backend_label, self.device]

    def _shown_items(self) -> list[FittedLabel]:
        return [label for label in self.items() if label.text()]

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._sum(lambda label: label.sizeHint())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._sum(lambda label: label.minimumSizeHint())

    def _sum(self, size) -> QSize:
        shown = self._shown_items()
        width = sum(size(label).width() for label in shown) + SPACING * max(0, len(shown) - 1)
        return QSize(width, max((size(label).height() for label in self.items()), default=0))

    def widths(self, room: int) -> list[int]:
        """Each shown item's width in ``room``: every short form first, then whole lines in order (the toolchain's
        first) while they fit; short of room, the last items give way first."""
        shown = self._shown_items()
        widths = [label.minimumSizeHint().width() for label in shown]
        spare = room - sum(widths) - SPACING * max(0, len(shown) - 1)
        for index, label in enumerate(shown):
            more = label.sizeHint().width() - widths[index]
            if 0 < more <= spare:
                widths[index] += more
                spare -= more
        for index in reversed(range(len(shown))):
            if spare >= 0:
                break
            given = min(widths[index], -spare)
            widths[index] -= given
            spare += given
        return widths

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._place()

    def _place(self) -> None:
        x = 0
        for label in self.items():
            label.setVisible(bool(label.text()))
        for label, width in zip(self._shown_items(), self.widths(self.width()), strict=True):
            label.setGeometry(x, 0, width, self.height())
            x += width + SPACING

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()):
            self.details_requested.emit()
        super().mouseReleaseEvent(event)

    def install(self, bar: QStatusBar) -> None:
        """Become ``bar``'s permanent widget: a message never hides it, and it never takes more than its
        share of the bar, so a message keeps room on its left however narrow the window."""
        bar.addPermanentWidget(self)
        bar.installEventFilter(self)
        self._fit_to(bar)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and isinstance(watched, QStatusBar):
            self._fit_to(watched)
        return False

    def _fit_to(self, bar: QStatusBar) -> None:
        self.setMaximumWidth(max(240, int(bar.width() * SHARE)))

    def gather(self) -> None:
        from neffbench.gui.widgets import background

        if self._worker is None:  # it imports torch: never on a Qt thread (see neffbench.gui.widgets.background)
            self._worker = background.start(_gather, returned=self._on_worker_returned, errored=self._on_worker_errored)

    def show_facts(self, facts) -> None:
        from neffbench.backends import registry
        from neffbench.doctor import advice
        from neffbench.toolchain.choose import choose_backend

        self.facts = facts
        self.backend, self.backend_reason = choose_backend("auto", facts)
        kind = facts.torch_neuronx_flavour or ""
        named = f"{_NAMES.get(kind, 'torch_neuronx')} {facts.torch_neuronx.version}{_FLAVOURS.get(kind, '')}"
        if facts.neuron_toolchain:
            whole = f"Neuron toolchain: {named}, neuronx-cc {facts.neuronx_cc.version or '?'}"
            self._set(self.toolchain, whole, named, theme.GOOD)
        else:
            missing = [c.name for c in (facts.torch_neuronx, facts.neuronx_cc) if not c.found]
            installed = f"; {named} installed" if kind else ""
            whole = f"Neuron toolchain: not found ({', '.join(missing)} missing{installed})"
            self._set(self.toolchain, whole, "Toolchain: not found", theme.WARN)
        backend = registry.get(self.backend)
        warning = backend.status_warning(facts)
        short = f"Compiles: {self.backend}"
        if warning is not None:
            self._set(self.backend_label, f"Compiles: {warning}", short, theme.WARN)
        else:
            colour = theme.GOOD if backend.makes_neff else theme.WARN
            self._set(self.backend_label, f"Compiles: {backend.short}", short, colour)
        more = f" +{len(facts.devices) - 1}" if len(facts.devices) > 1 else ""
        device = f"{facts.devices[0]}{more}" if facts.devices else "none"
        self._set(self.device, f"Neuron device: {device}", f"Device: {device.removeprefix('/dev/')}", None)
        tip = "\n".join(advice(facts))
        for label in self.items():
            label.setToolTip(f"{label.text()}\n\nWhat `neffbench doctor` found:\n{tip}\n\n{CLICK}")
        self.backend_label.setToolTip(
            f"Compiles with {self.backend}, {BACKEND_LABELS[self.backend]}, because "
            f"{self.backend_reason}.\n\n{self.backend_label.toolTip()}"
        )
        self.gathered.emit(facts)

    def lines(self) -> list[str]:
        """Each item's whole line, as the detail shows them."""
        return [label.text() for label in self.items() if label.text()]

    def _set(self, label: FittedLabel, text: str, short: str, colour: str | None) -> None:
        mark = "● " if colour else ""
        label.setText(mark + text, mark + short)
        label.setStyleSheet(f"color: {colour};" if colour else "")
        self.updateGeometry()
        self._place()

    def _on_worker_returned(self, facts) -> None:
        self._worker = None
        self.show_facts(facts)

    def _on_worker_errored(self, exc: Exception) -> None:
        self._worker = None
        self._set(self.toolchain, f"Toolchain check failed: {exc}", "Toolchain check failed", theme.BAD)
        self.toolchain.setToolTip(f"{self.toolchain.text()}\n\n{CLICK}")
