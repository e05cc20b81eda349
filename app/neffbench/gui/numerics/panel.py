"""The Numerics tab: a job compared layer by layer. Controls (runtime, taps, depth, Compare, Cancel), the status
line, the job's kept compares and one to overlay, the chart, the table of taps and the selected tap's detail.

It presents and asks: ``compare_requested(job_dir, options)`` and ``cancel_requested`` go to a
CompareController (``wire`` connects them, for the window and the tests); its reports come back via ``show_*``.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSpinBox, QSplitter, QVBoxLayout, QWidget

from neffbench.gui.numerics import model
from neffbench.gui.numerics.chart import ErrorChart
from neffbench.gui.numerics.detail import TapDetail
from neffbench.gui.numerics.table import TapTable
from neffbench.gui.widgets import background, theme
from neffbench.gui.widgets.flow import TurningSplitter, flow_row, kept_together
from neffbench.gui.widgets.readable import scrolling
from neffbench.runs.runtimes import RUNTIMES
from neffbench.words import plural

IDLE = "Not compared yet here: Compare taps the job's modules and sets each one against eager and float64."
NO_JOB = "No job. Choose one in the Artifacts tab (Compare layer by layer…) or from the Run tab."
NO_OVERLAY = "none"


def patterns_of(text: str) -> tuple[str, ...]:
    """``layers.*.mlp, head`` or ``layers.*.mlp head``: the patterns, in order."""
    return tuple(p for p in re.split(r"[,\s]+", text) if p)


class NumericsPanel(QWidget):
    lower: TurningSplitter  # type: ignore[assignment]  # shadows QWidget.lower(), never called on this panel
    compare_requested = Signal(str, dict)
    cancel_requested = Signal()
    scanned = Signal(object)  # model.Scan, once the kept compares are listed
    shown = Signal(object)  # the document now drawn (None: nothing)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.job_dir: str | None = None
        self.document: dict[str, Any] | None = None
        self.overlay: dict[str, Any] | None = None
        self.scan: model.Scan | None = None
        self.running = False
        self._token = 0
        self._select_after_scan: str | None = None
        self._build()
        self._wire()
        self.set_job(None)

    # ---- building ----

    def _build(self) -> None:
        self.job_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.job_label.setObjectName("numerics-job")
        self.job_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        controls = self._build_controls()
        self.status_label = QLabel(IDLE, wordWrap=True)
        self.status_label.setObjectName("numerics-status")
        self.shown_combo = QComboBox()
        self.shown_combo.setObjectName("numerics-shown")
        self.shown_combo.setToolTip("This job's compares, kept in its compares/ folder, newest first.")
        self.overlay_combo = QComboBox()
        self.overlay_combo.setObjectName("numerics-overlay")
        self.overlay_combo.setToolTip(
            "A second compare drawn dashed on the same chart, its taps matched by module path: another of this "
            "job's, or one of another job in the workdir (the same model compiled with other options)."
        )
        for combo in (self.shown_combo, self.overlay_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(22)
        kept = flow_row(
            kept_together(QLabel("Shown"), self.shown_combo), kept_together(QLabel("Overlay"), self.overlay_combo)
        )
        self.notes_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.notes_label.setObjectName("numerics-notes")
        self.notes_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Read once per compare, kept small: the chart and the table need the height on a laptop screen.
        self.notes_label.setStyleSheet("color: #555555; font-size: 8.5pt;")
        self.chart = ErrorChart()
        self.table = TapTable()
        self.detail = TapDetail()
        self.lower = TurningSplitter()
        self.lower.addWidget(self.table)
        self.lower.addWidget(self.detail)
        self.lower.setChildrenCollapsible(False)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("numerics-splitter")
        self.splitter.addWidget(self.chart)
        self.splitter.addWidget(self.lower)
        self.splitter.setChildrenCollapsible(False)
        self.lower.setStretchFactor(0, 3)
        self.lower.setStretchFactor(1, 2)
        self.lower.setSizes([600, 400])  # the table's figures in view before the histograms' width
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        for widget in (self.job_label, controls, self.status_label, kept, self.notes_label):
            layout.addWidget(widget)
        # The chart and the histograms keep their readable height; a short window scrolls them.
        layout.addWidget(scrolling(self.splitter), 1)

    def _build_controls(self) -> QWidget:
        self.runtime_combo = QComboBox()
        self.runtime_combo.setObjectName("numerics-runtime")
        self.runtime_combo.addItems(list(RUNTIMES))
        self.runtime_combo.setToolTip(
            "As for Run: auto is a NeuronCore runtime when a Neuron device is here, else cpu (the job's module "
            "on this computer's CPU)."
        )
        self.taps_edit = QLineEdit()
        self.taps_edit.setObjectName("numerics-taps")
        self.taps_edit.setPlaceholderText("every module (or: layers.*.mlp, head)")
        self.taps_edit.setMinimumWidth(140)
        self.taps_edit.setToolTip(
            "Module paths to tap, as named_modules() names them, comma- or space-separated; * is one path "
            "segment, ** any number. Empty: every module down to the deepest depth with at most 64 taps."
        )
        self.depth_spin = QSpinBox()
        self.depth_spin.setObjectName("numerics-depth")
        self.depth_spin.setRange(0, 64)
        self.depth_spin.setSpecialValueText("default")
        self.depth_spin.setToolTip("Tap modules down to this depth (1: the module's children); 0: the default.")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("numerics-compare")
        self.compare_button.setToolTip(
            "Compile the job again with every tapped module's output as an extra output (a job of its own, "
            "cached), run it and the job once, and set each tap against the eager run in the job's dtype and "
            "a float64 run."
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("numerics-cancel")
        pairs = []
        for text, widget in (("Runtime", self.runtime_combo), ("Taps", self.taps_edit), ("Depth", self.depth_spin)):
            label = QLabel(text)
            label.setBuddy(widget)
            pairs.append(kept_together(label, widget))
        return flow_row(*pairs, kept_together(self.compare_button, self.cancel_button))

    def _wire(self) -> None:
        self.compare_button.clicked.connect(self._on_compare_button_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.taps_edit.returnPressed.connect(self._on_compare_button_clicked)
        self.shown_combo.currentIndexChanged.connect(self._on_shown_combo_current_index_changed)
        self.overlay_combo.currentIndexChanged.connect(self._on_overlay_combo_current_index_changed)
        self.table.tap_selected.connect(self._on_table_tap_selected)
        self.chart.tap_clicked.connect(self._on_chart_tap_clicked)

    # ---- the job ----

    def set_job(self, job_dir: str | Path | None) -> None:
        """Show ``job_dir`` (None: no job): everything of the job before is cleared, its compares read off the
        GUI thread."""
        self.job_dir = str(job_dir) if job_dir else None
        self._token += 1
        self.scan = None
        self._select_after_scan = None
        self._fill_combos([], [])
        self._show(None)
        self._set_status(IDLE if self.job_dir else NO_JOB)
        self.job_label.setText(f"Reading {escape(self.job_dir)}…" if self.job_dir else NO_JOB)
        self._update_buttons()
        if self.job_dir:
            self.rescan()

    def rescan(self, select: str | None = None) -> None:
        if self.job_dir is None:
            return
        self._select_after_scan = select or self._select_after_scan
        background.start(self._scan, self._token, self.job_dir, returned=self._on_scan_returned)

    @staticmethod
    def _scan(token: int, job_dir: str) -> tuple[int, model.Scan]:
        return token, model.scan(job_dir)

    def _on_scan_returned(self, answer: tuple[int, model.Scan]) -> None:
        token, scan = answer
        if token != self._token:
            return  # another job chosen since
        self.scan = scan
        self.job_label.setText(scan.summary)
        wanted = self._select_after_scan or (str(self.document_path) if self.document_path else None)
        self._select_after_scan = None
        self._fill_combos(scan.kept, scan.others)
        index = next((i for i, k in enumerate(scan.kept) if str(k.path) == wanted), 0)
        if scan.kept:
            if not self.running and self.status_label.text() == IDLE:
                n = len(scan.kept)
                self._set_status(f"{n} compare{'s' if n != 1 else ''} of this job kept; Compare makes another.")
            self.shown_combo.setCurrentIndex(index)
            self._on_shown_combo_current_index_changed(index)  # the same index again still draws it
        self.scanned.emit(scan)

    @property
    def document_path(self) -> Path | None:
        kept = self.shown_combo.currentData()
        return kept.path if isinstance(kept, model.Kept) else None

    def _fill_combos(self, kept: list[model.Kept], others: list[model.Kept]) -> None:
        for combo in (self.shown_combo, self.overlay_combo):
            combo.blockSignals(True)
            combo.clear()
        self.overlay_combo.addItem(NO_OVERLAY, None)
        for entry in kept:
            self.shown_combo.addItem(entry.label, entry)
            self.shown_combo.setItemData(self.shown_combo.count() - 1, str(entry.path), Qt.ItemDataRole.ToolTipRole)
        for entry in [*[k for k in kept if k.document is not None], *others]:
            self.overlay_combo.addItem(entry.label, entry)
            self.overlay_combo.setItemData(self.overlay_combo.count() - 1, str(entry.path), Qt.ItemDataRole.ToolTipRole)
        if not kept:
            self.shown_combo.addItem("no compare of this job yet" if self.job_dir else "—", None)
        for combo in (self.shown_combo, self.overlay_combo):
            combo.blockSignals(False)
        self.shown_combo.setEnabled(bool(kept))
        self.overlay_combo.setEnabled(bool(kept) and self.overlay_combo.count() > 1)

    # ---- what is drawn ----

    def _show(self, document: dict[str, Any] | None) -> None:
        self.document = document
        self.chart.show_compares(document, self.overlay if document else None)
        self.table.show_taps(document)
        self.detail.clear()
        self._show_notes(document)
        self.shown.emit(document)

    def _show_notes(self, document: dict[str, Any] | None) -> None:
        if document is None:
            self.notes_label.clear()
            self.notes_label.setVisible(False)
            return
        lines = []
        changed = document.get("taps_changed_result")
        if changed:
            lines.append(
                f"<span style='color:{theme.BAD}'><b>{escape(changed[0].upper() + changed[1:])}</b></span><br>"
            )
        cannot = model.no_device_output(document)
        if cannot:  # what the figures below are not, before them
            lines.append(f"<span style='color:{theme.BAD}'><b>{escape(cannot[0].upper() + cannot[1:])}</b></span><br>")
            if document.get("measured") == "eager":
                lines.append(
                    f"What is shown is {escape(model.measured(document))} (eager, in the module's dtype) against "
                    "float64: what the dtype itself costs on this CPU."
                )
        for reference, why in (document.get("skipped") or {}).items():
            if not (cannot and reference == "vs_eager"):
                lines.append(f"Not compared {model.LABELS.get(reference, reference)}: {escape(str(why))}")
        lines += [
            escape(str(n)[0].upper() + str(n)[1:]) + ("" if str(n).endswith(".") else ".")
            for n in document.get("notes") or []
            if n
        ]
        if document.get("caveat"):
            lines.append(f"<i>{escape(document['caveat'])}</i>")
        tapped = document.get("tapped_job")
        if tapped:
            cached = " (served from the cache)" if document.get("cached") else ""
            lines.append(f"Tapped variant: {escape(tapped)}{cached}; runtime {escape(str(document.get('runtime')))}.")
        self.notes_label.setText(" ".join(lines))
        self.notes_label.setVisible(bool(lines))

    def select_tap(self, index: int | None) -> None:
        """Select tap ``index`` in the table and the chart, and show its detail."""
        if self.document is None or index is None or not 0 <= index < len(self.document.get("taps") or []):
            self.table.select(None)
            self.chart.select(None)
            self.detail.clear()
            return
        self.table.select(index)
        self.chart.select(index)
        self.detail.show_tap(self.document, index)

    # ---- reports from the controller ----

    def show_started(self, job_dir: str) -> None:
        self.running = True
        self._update_buttons()
        self._set_status(f"Comparing {Path(job_dir).name}…")

    def show_step(self, sentence: str) -> None:
        if self.running:
            self._set_status(sentence[0].upper() + sentence[1:] + ("" if sentence.endswith("…") else "…"))

    def show_finished(self, result: Any) -> None:
        self.running = False
        self._update_buttons()
        document = result.document
        firsts = [f for f in (model.first_index(document, r) for r in model.LABELS) if f is not None]
        verdict = "every tap is within its tolerance" if not firsts else "the first divergent taps are marked"
        cannot = model.no_device_output(document)
        if cannot:
            verdict = cannot + ("; the first divergent of the CPU run is marked" if firsts else "")
        self._set_status(
            f"Compared {plural(len(document.get('taps') or []), 'tap')}: {verdict}. Kept in {result.path}",
            theme.WARN if cannot else None,
        )
        self.rescan(select=str(result.path))

    def show_failed(self, message: str) -> None:
        self.running = False
        self._update_buttons()
        self._set_status(f"Compare failed: {message}", theme.BAD)

    def show_cancelled(self) -> None:
        self.running = False
        self._update_buttons()
        self._set_status("Cancelled: nothing of the compare is left running.", theme.WARN)
        self.rescan()

    # ---- internals ----

    def options(self) -> dict[str, Any]:
        depth = self.depth_spin.value()
        return {
            "runtime": self.runtime_combo.currentText(),
            "patterns": patterns_of(self.taps_edit.text()),
            "depth": depth or None,
        }

    def _set_status(self, text: str, colour: str | None = None) -> None:
        self.status_label.setStyleSheet(f"color: {colour};" if colour else "")
        self.status_label.setText(text)

    def _update_buttons(self) -> None:
        self.compare_button.setEnabled(self.job_dir is not None and not self.running)
        self.cancel_button.setEnabled(self.running)

    def _on_compare_button_clicked(self) -> None:
        if self.job_dir is not None and not self.running:
            self.compare_requested.emit(self.job_dir, self.options())

    def _on_cancel_button_clicked(self) -> None:
        if self.running:
            self._set_status("Cancelling…")
            self.cancel_button.setEnabled(False)
            self.cancel_requested.emit()

    def _on_shown_combo_current_index_changed(self, _index: int) -> None:
        kept = self.shown_combo.currentData()
        if isinstance(kept, model.Kept) and kept.error:
            self._show(None)
            self._set_status(kept.error, theme.BAD)
            return
        self._show(kept.document if isinstance(kept, model.Kept) else None)

    def _on_overlay_combo_current_index_changed(self, _index: int) -> None:
        kept = self.overlay_combo.currentData()
        self.overlay = kept.document if isinstance(kept, model.Kept) else None
        self.chart.show_compares(self.document, self.overlay)
        self.chart.select(self.table.selected_index())

    def _on_table_tap_selected(self, index: int) -> None:
        self.select_tap(index)

    def _on_chart_tap_clicked(self, index: int) -> None:
        self.select_tap(index)


def wire(panel: NumericsPanel, controller: Any) -> None:
    """The panel's requests to a CompareController and its reports back."""
    panel.compare_requested.connect(controller.start)
    panel.cancel_requested.connect(controller.cancel)
    controller.started.connect(panel.show_started)
    controller.step_changed.connect(panel.show_step)
    controller.finished.connect(panel.show_finished)
    controller.failed.connect(panel.show_failed)
    controller.cancelled.connect(panel.show_cancelled)
