"""The Run view's choices before a run: the target (a job directory or a NEFF file) and which runtimes can run it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

IDLE = (
    "Run checks the target's outputs against its reference.npz, then times the warm-up and the "
    "iterations; every run is recorded in the target's runs/ folder."
)
RUNTIME_TIP = (
    "auto: a NeuronCore runtime when a Neuron device is here, else cpu. nrtpy or spike load the NEFF; "
    "torchscript loads model.pt after torch_neuronx; cpu times the job's module on the CPU (CPU figures, never "
    "device ones)."
)
NO_TARGET = (
    "No target yet. Choose a job directory (Job…) or a .neff file (NEFF…) to run, or compile: the Run tab then "
    "holds the job just made."
)


def selectable_label(name: str) -> QLabel:
    """A wrapped label whose text can be selected (and copied): paths and reasons."""
    label = QLabel(objectName=name, wordWrap=True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def beside(label: QLabel, widget: QWidget) -> QHBoxLayout:
    """``widget`` at the top right of a label that takes the rest of the line (and wraps)."""
    row = QHBoxLayout()
    row.addWidget(label, 1)
    row.addWidget(widget, 0, Qt.AlignmentFlag.AlignTop)
    return row


class TargetChooser(QWidget):
    """Job… and NEFF… buttons; ``chosen(path)`` once the user has picked one. ``start_dir()`` says where the
    dialogs open (the window sets it to its workdir)."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.start_dir: Callable[[], str] = str
        self.job_button = QPushButton("Job…", objectName="run-choose-job")
        self.job_button.setToolTip("Run a job directory (one with a job.json): its NEFF, or its module on the CPU.")
        self.neff_button = QPushButton("NEFF…", objectName="run-choose-neff")
        self.neff_button.setToolTip("Run a .neff file (its job's inputs and reference are used when it has one).")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.job_button)
        layout.addWidget(self.neff_button)
        self.job_button.clicked.connect(self._on_job_button_clicked)
        self.neff_button.clicked.connect(self._on_neff_button_clicked)

    def _on_job_button_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a job directory to run", self.start_dir())
        if path:
            self.chosen.emit(path)

    def _on_neff_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose a NEFF to run", self.start_dir(), "NEFF files (*.neff);;All files (*)"
        )
        if path:
            self.chosen.emit(path)


def show_offers(combo: QComboBox, offers: dict[str, tuple[bool, str]], general_tip: str) -> None:
    """Grey out the runtimes that cannot run here, each with its reason as its tooltip; the combo's own tooltip
    lists them too. The current choice is left as it is (a run on it still says why it cannot)."""
    model = combo.model()
    unavailable = []
    for row in range(combo.count()):
        name = combo.itemText(row)
        ok, why = offers.get(name, (True, ""))
        if isinstance(model, QStandardItemModel):
            model.item(row).setEnabled(ok)
        combo.setItemData(row, f"{name}: {why}" if why else name, Qt.ItemDataRole.ToolTipRole)
        if not ok:
            unavailable.append(f"• {name}: {why}")
    combo.setToolTip(general_tip + ("\n\nCannot run here:\n" + "\n".join(unavailable) if unavailable else ""))
