"""Status-bar summary of what ``neffbench doctor`` finds: toolchain, the backend a compile will use, devices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QStatusBar, QWidget

from neffbench.backends.registry import LABELS as BACKEND_LABELS
from neffbench.gui.widgets import theme

if TYPE_CHECKING:
    from neffbench.gui.widgets.background import Task

# Short, for the status bar (its permanent widgets count in the window's minimum width); the tooltip has
# the backends' whole labels and the reason.
_NAMES = {"native": "TorchNeuron", "legacy": "torch_neuronx"}
_FLAVOURS = {"legacy": " (legacy)"}
# The summary's share of the status bar at most: the rest, on its left, is where messages show.
SHARE = 0.55


def _gather():
    from neffbench.toolchain import probe

    return probe.gather()


class _FittedLabel(QLabel):
    """A status line that gives way on a narrow window: cut with … rather than widening the status bar past
    the screen or crowding out its messages. ``text()`` is the whole line; the tooltip repeats it."""

    def __init__(self, text: str = ""):
        super().__init__()
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self._full = text
        self._fit()

    def text(self) -> str:
        return self._full

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 8, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(80, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        super().setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(0, self.width())))


class DoctorStatus(QWidget):
    """Three labels; gathering takes seconds (it probes the toolchain in a child), so it runs on a worker."""

    gathered = Signal(object)  # neffbench.toolchain.facts.Facts

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.facts = None
        self.backend: str | None = None
        self.backend_reason = ""
        self.toolchain = _FittedLabel("Checking for the Neuron toolchain…")
        self.backend_label = _FittedLabel()
        self.device = _FittedLabel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(16)
        for label in (self.toolchain, self.backend_label, self.device):
            layout.addWidget(label)
        self._worker: Task | None = None

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
            self._set(
                self.toolchain, f"Neuron toolchain: {named}, neuronx-cc {facts.neuronx_cc.version or '?'}", theme.GOOD
            )
        else:
            missing = [c.name for c in (facts.torch_neuronx, facts.neuronx_cc) if not c.found]
            installed = f"; {named} installed" if kind else ""
            self._set(
                self.toolchain, f"Neuron toolchain: not found ({', '.join(missing)} missing{installed})", theme.WARN
            )
        backend = registry.get(self.backend)
        warning = backend.status_warning(facts)
        if warning is not None:
            self._set(self.backend_label, f"Compiles: {warning}", theme.WARN)
        elif not backend.makes_neff:
            self._set(self.backend_label, f"Compiles: {backend.short}", theme.WARN)
        else:
            self._set(self.backend_label, f"Compiles: {backend.short}", theme.GOOD)
        self._set(
            self.device,
            f"Neuron device: {facts.devices[0]}" + (f" +{len(facts.devices) - 1}" if len(facts.devices) > 1 else "")
            if facts.devices
            else "Neuron device: none",
            None,
        )
        tip = "\n".join(advice(facts))
        for label in (self.toolchain, self.backend_label, self.device):
            label.setToolTip(f"{label.text()}\n\nWhat `neffbench doctor` found:\n{tip}")
        self.backend_label.setToolTip(
            f"Compiles with {self.backend}, {BACKEND_LABELS[self.backend]}, because "
            f"{self.backend_reason}.\n\n{self.backend_label.toolTip()}"
        )
        self.gathered.emit(facts)

    def _set(self, label: QLabel, text: str, colour: str | None) -> None:
        label.setText(("● " if colour else "") + text)
        label.setStyleSheet(f"color: {colour};" if colour else "")

    def _on_worker_returned(self, facts) -> None:
        self._worker = None
        self.show_facts(facts)

    def _on_worker_errored(self, exc: Exception) -> None:
        self._worker = None
        self._set(self.toolchain, f"Toolchain check failed: {exc}", theme.BAD)
