"""The Compile tab: state and elapsed clock, stages and compiler passes as they happen, the log, and results."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from neffbench.backends import registry as backends
from neffbench.backends.registry import LABELS as BACKEND_LABELS
from neffbench.gui.compile.controller import CompileRun
from neffbench.gui.compile.log_files_window import show_job_logs
from neffbench.gui.compile.log_view import LogView
from neffbench.gui.compile.stages import StageTree
from neffbench.gui.explain.view import ExplanationView
from neffbench.gui.widgets import theme
from neffbench.gui.widgets.flow import TurningSplitter
from neffbench.gui.widgets.readable import elide_with_tooltips
from neffbench.jobs import NO_NEFF_NOTE, JobResult
from neffbench.jobs.summary import failure_sentence, human_bytes, outcome_label
from neffbench.kernels import registry
from neffbench.kernels.bucket_words import bucket_cell, bucket_phrase, buckets_text
from neffbench.words import plural, sentences

if TYPE_CHECKING:
    from neffbench.gui.sweeps.progress import SweepProgress


def clock(seconds: float) -> str:
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def numerics_text(numerics: dict | None) -> str:
    """Max error against the eager reference, or why it was not checked."""
    if not numerics:
        return "not checked"
    if not numerics.get("checked"):
        return f"not checked: {numerics.get('skipped_reason') or 'no reason given'}"
    verdict = "within" if numerics.get("match") else "OUTSIDE"
    where = numerics.get("where") or "?"
    return (
        f"max abs error {numerics.get('max_abs_error', float('nan')):.3g} ({verdict} atol {numerics.get('atol'):g} "
        f"/ rtol {numerics.get('rtol'):g}, {where})"
    )


class CompilePanel(QWidget):
    """Presents what the CompileController reports; ``job_activated`` asks to show a job's artifacts."""

    job_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.state_label = QLabel("Idle. Press Compile (Ctrl+Return) to compile every bucket of the spec.")
        self.state_label.setObjectName("compileState")
        self.state_label.setWordWrap(True)
        font = self.state_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.state_label.setFont(font)
        self.elapsed_label = QLabel()
        self.elapsed_label.setObjectName("elapsed")
        self.backend_label = QLabel()
        self.backend_label.setWordWrap(True)
        self.stages = StageTree()
        self.life_label = QLabel()
        self.life_label.setObjectName("signsOfLife")
        self.life_label.setToolTip(
            "How long since the compile last printed anything, and the compiler's "
            "progress dots on a line it has not ended yet."
        )
        self.log_view = LogView()
        self.explanation = ExplanationView()
        self.log_tabs = QTabWidget()
        self.log_tabs.setObjectName("logTabs")
        self.log_tabs.addTab(self.log_view, "Log")
        self.log_tabs.addTab(self.explanation, "Explanation")
        self.log_tabs.setTabToolTip(
            1,
            "What the last job's log says happened and why (as `neffbench explain`). "
            "Drop any compiler log here to explain it.",
        )
        self.results = QTreeWidget()
        self.results.setHeaderLabels(["Bucket", "Outcome", "NEFF", "Numerics vs eager reference", "Job"])
        self.results.setRootIsDecorated(False)
        self.results.setToolTip("Double-click a job to see it in Artifacts.")
        header = self.results.header()
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        elide_with_tooltips(self.results)
        self.splitter = TurningSplitter()  # the stages above the log on a narrow window
        self.splitter.addWidget(self.stages)
        self.splitter.addWidget(self.log_tabs)
        self.splitter.setSizes([380, 800])
        # The log has most of any room, side by side or stacked: it is what changes during a compile.
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.vsplitter = QSplitter(Qt.Orientation.Vertical)
        self.vsplitter.addWidget(self.splitter)
        self.vsplitter.addWidget(self.results)
        self.vsplitter.setSizes([600, 160])
        top = QHBoxLayout()
        top.addWidget(self.state_label, 1)
        top.addWidget(self.elapsed_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.backend_label)
        layout.addWidget(self.life_label)
        layout.addWidget(self.vsplitter, 1)
        self._elapsed = QElapsedTimer()
        self._clock = QTimer(self)
        self._clock.setInterval(250)
        self._clock.timeout.connect(self._on_clock_timeout)
        self._last_duration: float | None = None
        self._failure_explained = False  # this run's first failed job is on show: later jobs do not replace it
        self._buckets: Sequence[dict[str, int]] = ()
        self._last_output = QElapsedTimer()
        self._dots = 0
        self.cancelling = False
        self.sweep: SweepProgress | None = None  # the SweepProgress of a running sweep
        self.workdir: str | None = None  # where a sweep's jobs are, for its results' links
        self.results.itemActivated.connect(self._on_results_item_activated)
        self.log_view.open_log_requested.connect(self._on_log_view_open_log_requested)
        self._show_elapsed()

    def _on_log_view_open_log_requested(self, path: Path) -> None:
        show_job_logs(path.parent, self, path.name)

    def show_plan(self, spec, workdir: str, backend: str | None) -> None:
        """Before the first compile: what pressing Compile will do."""
        if self._elapsed.isValid():
            return  # a run's outcome stays on show until the next one
        buckets = registry.for_spec(spec).buckets(spec)
        n = len(buckets)
        what = (
            "the cpu-check backend (a CPU trace; no NEFF is made here)"
            if backends.makes_no_neff(backend)
            else f"{BACKEND_LABELS[backend]} and neuronx-cc"
            if backend in BACKEND_LABELS
            else "the backend the toolchain check picks"
        )
        self.state_label.setText(
            f"Idle. Compile (Ctrl+Return) runs {n} job{'s' if n != 1 else ''} for {spec.name} "
            f"({buckets_text(buckets)}), one after another, with {what}, "
            f"into {workdir}."
        )

    # ---- reports from the controller ----

    def begin_run(self, first_column: str = "Bucket") -> None:
        """Empty every view and start the clock, for a compile or a sweep."""
        self.stages.restart()
        self.results.clear()
        self.results.headerItem().setText(0, first_column)
        self._dots = 0
        self._last_output.start()
        self.log_view.clear()
        self._last_duration = None
        self._failure_explained = False
        self.cancelling = False
        self._elapsed.start()
        self._clock.start()
        self.reset_style()

    def end_run(self, text: str, outcome: str) -> None:
        self._clock.stop()
        self._show_elapsed()
        self.life_label.clear()
        self.state_label.setText(text)
        self.state_label.setStyleSheet(f"color: {theme.JOB_OUTCOME_COLOURS.get(outcome, theme.ORIGINAL)};")

    def show_started(self, spec, backend_hint: str = "") -> None:
        self._buckets = registry.for_spec(spec).buckets(spec)
        self.begin_run()
        self.explanation.mark_stale(f"one of the compile started at {_time_of_day()}")
        n = len(self._buckets)
        self.state_label.setText(
            f"Compiling {spec.name}: {n} bucket{'s' if n > 1 else ''} "
            f"({buckets_text(self._buckets)}), one after another."
        )
        self.backend_label.setText(backend_hint)
        self._show_elapsed()

    def show_sweep_started(self, plan) -> None:
        from neffbench.gui.sweeps.progress import SweepProgress

        self.sweep = SweepProgress(self, plan)
        self.explanation.mark_stale(f"one of the sweep started at {_time_of_day()}")
        self.results.headerItem().setText(0, "Point")
        self.backend_label.setText("")
        self._show_elapsed()

    def show_sweep_event(self, event: dict) -> None:
        if event.get("type") == "progress":  # a point's compiler is alive, as in a compile of its own
            self._show_progress(event)
        if self.sweep is not None:
            self.sweep.event(event)

    def show_sweep_finished(self, result, error: str | None = None) -> str:
        text = self.sweep.finished(result, error) if self.sweep is not None else ""
        failed = self.sweep.first_failed_job() if self.sweep is not None else None
        if failed is not None and Path(failed, "job.json").is_file():
            self.explanation.explain_path(failed)  # else it keeps saying it is of no point of this sweep
        self.sweep = None
        return text

    def show_last_duration(self, seconds: float | None) -> None:
        self._last_duration = seconds
        self._show_elapsed()

    def show_job_started(self, bucket: dict, job_dir: str) -> None:
        index = self._buckets.index(bucket) + 1 if bucket in self._buckets else 0
        self.stages.start_job(f"Bucket {bucket_phrase(bucket)} ({index} of {len(self._buckets)})", job_dir)
        self._dots = 0
        self.log_view.set_log_path(Path(job_dir) / "job.log")
        self.state_label.setText(
            f"Compiling bucket {bucket_phrase(bucket)} ({index} of {len(self._buckets)}) in {Path(job_dir).name}"
        )

    def _show_progress(self, event: dict) -> None:
        """The compiler's progress dots on a line it has not ended: output, for the signs of life."""
        self._dots = int(event.get("dots") or 0)
        self._last_output.start()

    def show_lines(self, lines: list[str]) -> None:
        """The compile printed: into the log, and the clock of signs of life starts again."""
        self.log_view.append_lines(lines)
        self._last_output.start()
        self._dots = 0

    def show_event(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "stage":
            self.stages.enter_stage(event.get("stage", "?"), event.get("t"))
        elif kind == "backend":
            self._show_backend(event)
        elif kind == "pass":
            self.stages.show_pass(event)
        elif kind == "progress":
            self._show_progress(event)
        elif kind == "compiler_error" and event.get("code"):
            self.log_view.add_error_code(event["code"], event.get("message", ""))
        elif kind == "compiler_status":
            self.stages.set_job_state(f"compiler {event.get('status')}")

    def show_job_finished(self, result: JobResult) -> None:
        job = result.view
        self.stages.finish_job(result.outcome, outcome_label(job), job.duration_s)
        neffs = result.neffs
        if neffs:
            neff_text = ", ".join(f"{Path(n['path']).name} ({human_bytes(n.get('size'))})" for n in neffs)
        else:
            neff_text = job.neff_note or "no NEFF"
        item = QTreeWidgetItem(
            [
                _bucket_cell(job.bucket),
                outcome_label(job),
                neff_text,
                numerics_text(result.numerics),
                result.job_dir.name,
            ]
        )
        item.setData(0, Qt.ItemDataRole.UserRole, str(result.job_dir))
        item.setForeground(1, QColor(theme.JOB_OUTCOME_COLOURS.get(result.outcome, theme.ORIGINAL)))
        if result.outcome != "succeeded":
            for col in range(5):
                item.setToolTip(col, failure_sentence(job))
        if not neffs and job.no_neff_by_design:
            item.setToolTip(
                2,
                f"{NO_NEFF_NOTE}: the Neuron toolchain is not installed here, so the compile ran "
                "torch.jit.trace on CPU to check the module and made no NEFF.",
            )
        self.results.addTopLevelItem(item)
        for col in range(self.results.columnCount() - 1):
            self.results.resizeColumnToContents(col)
        # Every job, a cache hit too (its explanation says where it was served from), until one fails: the
        # run's first failure stays on show.
        if not self._failure_explained:
            self.explanation.explain_path(result.job_dir)
            self._failure_explained = result.outcome == "failed"
            if result.outcome == "failed":
                self.log_tabs.setCurrentWidget(self.explanation)

    def show_cancelling(self) -> None:
        """Cancel was asked for; "Cancelled" waits until the job's processes are gone (show_finished)."""
        if self._clock.isActive():  # the clock runs exactly while a compile does
            self.cancelling = True
            self.state_label.setText("Cancelling… stopping the compile and every process it started.")
            self.state_label.setStyleSheet(f"color: {theme.WARN};")

    def forget_job(self, job_dir: str) -> None:
        """A job was deleted: it leaves the results too."""
        for i in reversed(range(self.results.topLevelItemCount())):
            item = self.results.topLevelItem(i)
            assert item is not None  # i < topLevelItemCount()
            if item.data(0, Qt.ItemDataRole.UserRole) == str(job_dir):
                self.results.takeTopLevelItem(i)

    def show_finished(self, run: CompileRun) -> None:
        total = len(registry.for_spec(run.spec).buckets(run.spec))
        self.end_run(finished_text(run, total), run.outcome)

    def reset_style(self) -> None:
        self.state_label.setStyleSheet("")

    # ---- internals ----

    def _show_backend(self, event: dict) -> None:
        backend, reason = event.get("backend"), event.get("reason") or ""
        if backends.makes_no_neff(backend):
            self.backend_label.setText(f"Backend cpu-check: torch.jit.trace on CPU, no NEFF will be made ({reason}).")
            self.backend_label.setStyleSheet(f"color: {theme.WARN};")
        else:
            cpu = event.get("cpu_backend")
            extra = f"; cpu_backend={cpu} ({event.get('cpu_backend_reason')})" if cpu is not None else ""
            self.backend_label.setText(f"Backend {backend}: {reason}{extra}.")
            self.backend_label.setStyleSheet("")

    def _on_clock_timeout(self) -> None:
        self._show_elapsed()
        self.stages.tick()
        if self._last_output.isValid():  # the clock's own tick: a compile is running
            quiet = clock(self._last_output.elapsed() / 1000)
            dots = f" · compiler progress {'.' * min(self._dots, 40)} ({self._dots} dots)" if self._dots else ""
            self.life_label.setText(f"Last output {quiet} ago{dots}")

    def _show_elapsed(self) -> None:
        parts = []
        if self._elapsed.isValid():
            parts.append(f"Elapsed {clock(self._elapsed.elapsed() / 1000)}")
        if self._last_duration is not None:
            parts.append(f"last time this spec took {clock(self._last_duration)}")
        self.elapsed_label.setText(" · ".join(parts))

    def _on_results_item_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        self.job_activated.emit(item.data(0, Qt.ItemDataRole.UserRole))


def finished_text(run: CompileRun, total: int) -> str:
    """The headline once every bucket is done: for a failure its cause, for a cancel what became of each bucket."""
    done = len(run.results)
    if run.outcome == "succeeded":
        verb = "checked on CPU" if run.cpu_check_only else "compiled"
        cached = run.served_from_cache  # an identical earlier job's products: nothing was made here for them
        if cached == done:
            verb = "served from the cache (nothing was compiled here)"
        elif cached:
            verb = f"{verb} ({done - cached}) or served from the cache ({cached})"
        text = f"Succeeded: {done} of {plural(total, 'bucket')} {verb}"
        return sentences(text, f"{NO_NEFF_NOTE}: nothing was compiled for Neuron" if run.cpu_check_only else "")
    if run.outcome == "cancelled":
        cancelled = [r for r in run.results if r.outcome == "cancelled"]
        succeeded = sum(r.outcome == "succeeded" for r in run.results)
        parts = [f"{succeeded} succeeded before it"] if succeeded else []
        if total - done:
            parts.append(f"{total - done} not started")
        if not cancelled:
            return (
                "Cancelled before any bucket started."
                if not done
                else f"Cancelled after {done} of {plural(total, 'bucket')}."
            )
        index = done  # the cancelled job is the last one run
        head = f"Cancelled bucket {bucket_phrase(cancelled[0].view.bucket)} ({index} of {total})"
        return head + (f": {', '.join(parts)}." if parts else ".")
    if run.error:
        return f"Failed: {run.error}"
    failed = next((r for r in run.results if r.outcome != "succeeded"), None)
    if failed is None:
        return "Failed: see the log."
    where = (
        f" (bucket {bucket_phrase(failed.view.bucket)}, {run.results.index(failed) + 1} of {total})"
        if total > 1
        else ""
    )
    return f"Failed{where}: {failure_sentence(failed.view)}"


def _time_of_day() -> str:
    return _dt.datetime.now().strftime("%H:%M:%S")


def _bucket_cell(bucket: dict) -> str:
    """The results table's first column: the count (``8`` tokens), or ``batch=1 seq=128``."""
    return bucket_cell(bucket)
