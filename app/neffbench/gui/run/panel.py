"""The Run view: what the target is, run options, the live stage and verdict, latency plots, history, buckets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.compile.log_view import LogView
from neffbench.gui.run.history import OUTCOME_COLOURS, History, HistoryTable, kind_of, load_or_error, selection_text
from neffbench.gui.run.plots import BucketPlots, LatencyPlots
from neffbench.gui.run.queue import BucketQueue
from neffbench.gui.run.status import RunStatus, subject_text
from neffbench.gui.run.target import IDLE, NO_TARGET, RUNTIME_TIP, TargetChooser, beside, selectable_label, show_offers
from neffbench.gui.widgets import theme
from neffbench.gui.widgets.flow import flow_row, kept_together
from neffbench.gui.widgets.readable import scrolling
from neffbench.runs.runtimes import RUNTIMES, offered
from neffbench.runs.summary import latency_text, summary_lines
from neffbench.views.run import RunView
from neffbench.words import plural

MODES = (("default", None), ("device", "device"), ("host", "host"))
TABS = ("Latency", "Buckets", "Details", "Log")
LOG_LINES = 5_000  # the child says little; the record keeps its log's tail


def started_words(record: str, target: str | None, position: str = "") -> str:
    """``Started a run of seed-...: its outputs are checked, then it is timed.``, the job's name in place of the
    record's file name (the runtime is named once it has been chosen)."""
    path = Path(record)
    job = path.parent.parent.name if path.parent.name == "runs" else Path(target or record).name
    where = f" ({position})" if position else ""
    return f"Started a run of {job}{where}: its outputs are checked, then it is timed."


class RunPanel(QWidget):
    """Presents runs and asks for them: ``run_requested(target, options)`` and ``cancel_requested`` go to a
    RunController (the window wires them); its reports come back through ``show_*``."""

    run_requested = Signal(str, dict)
    cancel_requested = Signal()
    compare_requested = Signal(str)  # the target job, for the Numerics tab
    history_loaded = Signal(object)  # History, once the table and bucket plots show it

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.target_path: str | None = None
        self.history: History | None = None
        self._token = 0
        self._loads = 0  # history reads under way
        self._select_after_load: str | None = None
        self._fresh_target = False  # the next history read is the target's first (not a re-read after a run)
        self._live: dict[str, Any] = {}
        self._running = False
        self.facts: Any = None  # doctor's, once the window has them: which runtimes can run here
        self.queue = BucketQueue(self)
        self._build()
        self._wire()
        self.set_target(None)
        self.status.set_text(IDLE)

    # ---- building ----

    def _build(self) -> None:
        self.target_label = selectable_label("run-target")
        controls = self._build_controls()
        self._build_status()
        self._build_tabs()
        self._build_history()

        self.chooser = TargetChooser()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(beside(self.target_label, self.chooser))
        layout.addWidget(controls)
        layout.addWidget(self.status)
        layout.addWidget(self.splitter, 1)
        for first, second in (
            (self.runtime_combo, self.iterations_spin),
            (self.iterations_spin, self.warmup_spin),
            (self.warmup_spin, self.mode_combo),
            (self.mode_combo, self.run_button),
            (self.run_button, self.cancel_button),
            (self.cancel_button, self.tabs),
            (self.tabs, self.table),
        ):
            QWidget.setTabOrder(first, second)

    def _build_controls(self) -> QWidget:
        """The runtime, iterations, warm-up and mode fields with the Run and Cancel buttons, as one flow row."""
        self.runtime_combo = QComboBox()
        self.runtime_combo.setObjectName("run-runtime")
        self.runtime_combo.addItems(list(RUNTIMES))
        self.runtime_combo.setToolTip(RUNTIME_TIP)
        self.iterations_spin = QSpinBox()
        self.iterations_spin.setObjectName("run-iterations")
        self.iterations_spin.setRange(1, 1_000_000)
        self.iterations_spin.setValue(50)
        self.iterations_spin.setGroupSeparatorShown(True)
        self.iterations_spin.setToolTip("Timed calls.")
        self.warmup_spin = QSpinBox()
        self.warmup_spin.setObjectName("run-warmup")
        self.warmup_spin.setRange(0, 10_000)
        self.warmup_spin.setValue(5)
        self.warmup_spin.setToolTip("Untimed calls before the timed ones.")
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("run-mode")
        for text, value in MODES:
            self.mode_combo.addItem(text, value)
        self.mode_combo.setToolTip(
            "device: NeuronCore time (nrtpy, spike); host: wall clock with transfers; "
            "default: the runtime's first (device where it can)."
        )
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("run-button")
        self.run_button.setToolTip("Run the target: check its outputs against reference.npz, then time it.")
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancel-run-button")
        self.cancel_button.setEnabled(False)
        self.compare_button = QPushButton("Compare layer by layer…", objectName="run-compare-button", enabled=False)
        self.compare_button.setToolTip("Where this job's outputs diverge, module by module (Numerics tab).")
        # A flow, not a row: on a narrow window the controls wrap onto a second line instead of
        # setting the window's minimum width (each label stays with its field).
        pairs = []
        for text, widget in (
            ("Runtime", self.runtime_combo),
            ("Iterations", self.iterations_spin),
            ("Warm-up", self.warmup_spin),
            ("Mode", self.mode_combo),
        ):
            label = QLabel(text)
            label.setBuddy(widget)
            pairs.append(kept_together(label, widget))
        return flow_row(*pairs, kept_together(self.run_button, self.cancel_button), self.compare_button)

    def _build_status(self) -> None:
        """The live stage, verdict and numerics lines."""
        self.status = RunStatus()
        # The parts tests and the window read.
        self.stage_label, self.status_label = self.status.stage_label, self.status.status_label
        self.verdict_label, self.numerics_label = self.status.verdict_label, self.status.numerics_label
        self.problems_label = self.status.problems_label

    def _build_tabs(self) -> None:
        """The Latency, Buckets, Details and Log pages."""
        self.latency = LatencyPlots()
        self.selection_label = QLabel()
        self.selection_label.setObjectName("run-comparison")
        self.selection_label.setWordWrap(True)
        self.selection_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        latency_page = QWidget()
        latency_layout = QVBoxLayout(latency_page)
        latency_layout.setContentsMargins(4, 4, 4, 4)
        latency_layout.addWidget(self.latency, 1)
        latency_layout.addWidget(self.selection_label)
        self.buckets = BucketPlots()
        self.details = QPlainTextEdit()
        self.details.setObjectName("run-details")
        self.details.setReadOnly(True)
        self.log_view = LogView(max_lines=LOG_LINES)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("run-tabs")
        for page, name in zip((scrolling(latency_page), scrolling(self.buckets), self.details, self.log_view), TABS):
            self.tabs.addTab(page, name)

    def _build_history(self) -> None:
        """The history table, and the splitter that puts it under the tabs."""
        self.table = HistoryTable()
        self.history_label = QLabel("History")
        self.history_label.setObjectName("run-history-label")
        history = QWidget()
        history_layout = QVBoxLayout(history)
        history_layout.setContentsMargins(0, 4, 0, 0)
        history_layout.addWidget(self.history_label)
        history_layout.addWidget(self.table, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("run-splitter")
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(history)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

    def _wire(self) -> None:
        self.run_button.clicked.connect(self._on_run_button_clicked)
        self.cancel_button.clicked.connect(self.cancel)
        self.compare_button.clicked.connect(lambda: self.compare_requested.emit(self.target_path or ""))
        self.table.runs_selected.connect(self._on_table_runs_selected)
        self.chooser.chosen.connect(self.set_target)  # the chooser is disabled while a run goes
        self.buckets.run_missing_requested.connect(self._on_buckets_run_missing_requested)
        self.queue.run_requested.connect(self.run_requested)

    # ---- the target ----

    def set_target(self, path: str | None) -> None:
        """A job directory or a NEFF file (None: nothing to run); its history is read on a worker thread."""
        self.target_path = str(path) if path else None
        self.history = None
        self._token += 1
        self._fresh_target = True
        self.table.set_runs([])
        self.buckets.show_curve([], None)
        self.tabs.setTabEnabled(1, False)
        self._update_buttons()
        if self.target_path is None:
            self.target_label.setText(NO_TARGET)
            return
        self.target_label.setText(f"Reading {self.target_path}…")
        self.refresh()

    def refresh(self, select: str | None = None) -> None:
        """Re-reads the target's runs (off the GUI thread); ``select`` a record path once they are shown."""
        if self.target_path is None:
            return
        from neffbench.gui.widgets import background

        self._select_after_load = select or self._select_after_load
        self._loads += 1
        # Bound methods, not partials: Qt drops the connection if the panel goes before the result comes.
        background.start(
            load_or_error,
            self._token,
            self.target_path,
            returned=self._on_loader_returned,
            errored=lambda exc: None,
            finished=self._on_loader_finished,
        )

    def _on_loader_finished(self) -> None:
        self._loads -= 1

    @property
    def loading(self) -> bool:
        """A history read is under way."""
        return self._loads > 0

    # ---- reports from the controller ----

    def set_host(self, facts: Any) -> None:
        """What ``neffbench doctor`` found here: the runtimes that cannot run here are greyed out, with why."""
        self.facts = facts
        self._show_offers()

    def _show_offers(self) -> None:
        subject = self.history.subject if self.history is not None and not self.history.error else None
        show_offers(self.runtime_combo, offered(self.facts, subject), RUNTIME_TIP)

    def show_started(self, path: str) -> None:
        self._running = True
        self.status_label.setToolTip("")
        self._live = {"path": path}
        self._update_buttons()
        self.log_view.clear()
        self.status.show_problems([])
        self.status.show_verdict(None)
        self.status.set_stage("starting", None, live=True)
        self.status.set_text(started_words(path, self.target_path, self.queue.position_text()))

    def show_event(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "stage":
            stage = event.get("stage") or "?"
            self.status.set_stage(stage, True if stage == "done" else None, live=stage != "done")
        elif kind == "runtime":
            self._live.update({k: event.get(k) for k in ("runtime", "label", "on_device", "mode")})
            where = event.get("label") or event.get("runtime")
            cpu = " CPU figures: the job's module on this host, not a NeuronCore." if not event.get("on_device") else ""
            reason = event.get("reason") or ""
            # The why in short (the full sentence lists every runtime tried: the tooltip and Details have it).
            self.status.set_text(f"Running on {where} ({event.get('mode')} mode): {reason.split(' (')[0]}.{cpu}")
            self.status_label.setToolTip(reason)
        elif kind == "checks":
            self.status.show_problems(event.get("problems") or [])
        elif kind == "progress":
            self.status.show_progress(event)
        elif kind == "numerics":
            self.status.show_verdict(event)
        elif kind == "timing":
            # This run's timings before its record is re-read: plotted at once.
            record = {**self._live, "durations_ms": event.get("durations_ms") or [], "variant": event.get("variant")}
            self.latency.show_runs([record])
            n = len(record["durations_ms"])
            self.selection_label.setText(f"This run ({kind_of(record)}), {plural(n, 'iteration', grouped=True)}.")

    def show_lines(self, lines: list[str]) -> None:
        self.log_view.append_lines(lines)

    def show_status(self, text: str) -> None:
        """The controller's ``status_changed``: "Running…", "Cancelling…", then the outcome."""
        if self._running or text != "Running…":
            self.status.set_text(text)

    def show_finished(self, result: Any) -> None:
        self._running = False
        self.status.show_progress(None)
        self._update_buttons()
        run, outcome = RunView.of(result.record), result.outcome
        good = {"succeeded": True, "failed": False}.get(outcome)
        self.status.set_stage(outcome, good)
        head = summary_lines(run, str(result.path))[0]
        stats = run.stats or {}
        if outcome == "cancelled":
            done, asked = stats.get("iterations") or 0, run.iterations_requested
            head = (
                f"Cancelled after {done:,} of {asked:,} timed iterations (they are kept in the record)."
                if done and asked
                else "Cancelled before any iteration was timed."
            )
        elif run.stats:
            head += f" — {latency_text(run.stats)}"
        self.status.set_text(head, OUTCOME_COLOURS.get(outcome, theme.ORIGINAL))
        self.status.show_verdict(run.numerics)
        self.status.show_problems(list(run.checks))
        if self.target_path is not None:
            self.refresh(select=str(result.path))
        ended = self.queue.finished(outcome)  # may start the next missing bucket's run
        if ended:
            self.status.set_text(f"{head} {ended}", OUTCOME_COLOURS.get(outcome, theme.ORIGINAL))

    def show_failed(self, message: str) -> None:
        """The controller's ``failed``: nothing ran (or the runner broke); the sentence says why."""
        self._running = False
        self.status.show_progress(None)
        self.queue.finished("failed")
        self._update_buttons()
        self.status.set_stage("not started", False)
        self.status.set_text(message, theme.BAD)

    # ---- internals ----

    def _options(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime_combo.currentText(),
            "iterations": self.iterations_spin.value(),
            "warmup": self.warmup_spin.value(),
            "mode": self.mode_combo.currentData(),
        }

    def _update_buttons(self) -> None:
        self.run_button.setEnabled(self.target_path is not None and not self._running)
        self.cancel_button.setEnabled(self._running)
        self.chooser.setEnabled(not self._running)
        self.buckets.run_missing_button.setEnabled(not self._running)
        self.compare_button.setEnabled(self.target_path is not None and Path(self.target_path, "job.json").is_file())

    def _on_run_button_clicked(self) -> None:
        if self.target_path is not None and not self._running:
            self.run_requested.emit(self.target_path, self._options())

    def _on_buckets_run_missing_requested(self, job_dirs: list[str]) -> None:
        if job_dirs and not self._running:  # on the curve's runtime, so that its points join the curve
            runtime = self.history.curve_runtime if self.history is not None else None
            self.queue.start(job_dirs, {**self._options(), "runtime": runtime or self.runtime_combo.currentText()})

    def cancel(self) -> None:
        """Stop the running benchmark (the Cancel button, and Esc in the window); a no-op when none runs."""
        if self._running:
            self.status.set_text("Cancelling…")
            self.cancel_button.setEnabled(False)  # once is enough; Run comes back when the run has ended
            self.cancel_requested.emit()

    def _on_loader_returned(self, answer: tuple[int, History]) -> None:
        token, history = answer
        if token != self._token:
            return  # a target chosen since
        self.history = history
        if history.error:
            self.target_label.setText(f"<span style='color:{theme.BAD}'>{history.error}</span>")
            self.history_label.setText("History: none (not a runnable target)")
            self.history_loaded.emit(history)
            return
        text, cpu_only = subject_text(history.subject)
        self.target_label.setText(text)
        self._show_offers()
        # Only for a target just chosen: after a run of this one (a failed one too) the user's choice stays.
        fresh, self._fresh_target = self._fresh_target, False
        if fresh and cpu_only and self.runtime_combo.currentText() not in ("auto", "cpu"):
            self.runtime_combo.setCurrentText("auto")
        n = len(history.runs)
        compare = " (select two to compare)" if n > 1 else ""
        self.history_label.setText(f"History: {plural(n, 'run')} of this target, newest first{compare}")
        select, self._select_after_load = self._select_after_load, None
        self.table.set_runs(history.runs, select=select)
        several = len(history.curve) > 1
        self.buckets.show_curve(history.curve if several else [], history.curve_runtime)
        self.tabs.setTabEnabled(1, several)
        self.tabs.setTabToolTip(1, "" if several else "This compile has one bucket: nothing to compare across sizes.")
        self.history_loaded.emit(history)

    def _on_table_runs_selected(self, records: list[dict]) -> None:
        self.latency.show_runs(records)
        self.details.setPlainText("\n\n".join("\n".join(summary_lines(r, RunView.of(r).path)) for r in records))
        self.selection_label.setText(selection_text(records))
