"""Status-bar summary of what ``neffbench doctor`` finds: toolchain, the backend a compile will use, devices."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget
from neffbench.gui import theme


def _gather():
    from neffbench import doctor

    return doctor.gather()


class DoctorStatus(QWidget):
    """Three labels; gathering takes seconds (it probes the toolchain in a child), so it runs on a worker."""

    gathered = Signal(object)  # neffbench.doctor.Facts

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.facts = None
        self.backend: str | None = None
        self.backend_reason = ""
        self.toolchain = QLabel("Checking for the Neuron toolchain…")
        self.backend_label = QLabel()
        self.device = QLabel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(16)
        for label in (self.toolchain, self.backend_label, self.device):
            layout.addWidget(label)
        self._worker = None

    def gather(self) -> None:
        from superqt.utils import create_worker  # after the first paint: superqt imports all its widgets

        if self._worker is None:
            self._worker = create_worker(_gather, _connect={"returned": self._on_worker_returned,
                                                           "errored": self._on_worker_errored},
                                         _ignore_errors=True)

    def show_facts(self, facts) -> None:
        from neffbench.doctor import advice, choose_backend

        self.facts = facts
        self.backend, self.backend_reason = choose_backend("auto", facts)
        if facts.neuron_toolchain:
            self._set(self.toolchain, f"Neuron toolchain: torch_neuronx {facts.torch_neuronx.version}, "
                                      f"neuronx-cc {facts.neuronx_cc.version or '?'}", theme.GOOD)
        else:
            missing = [c.name for c in (facts.torch_neuronx, facts.neuronx_cc) if not c.found]
            self._set(self.toolchain, f"Neuron toolchain: not found ({', '.join(missing)} missing)", theme.WARN)
        if self.backend == "cpu-check":
            self._set(self.backend_label, "Compiles: cpu-check (CPU trace only, no NEFF)", theme.WARN)
        else:
            self._set(self.backend_label, f"Compiles: {self.backend} (makes NEFFs)", theme.GOOD)
        self._set(self.device, f"Neuron device: {facts.devices[0]}" + (f" +{len(facts.devices) - 1}"
                  if len(facts.devices) > 1 else "") if facts.devices else "Neuron device: none", None)
        tip = "\n".join(advice(facts))
        for label in (self.toolchain, self.backend_label, self.device):
            label.setToolTip(f"What `neffbench doctor` found:\n{tip}")
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
