"""The Run view's header parts: what the target is, and how the run is going (stage, status, verdict, problems)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from neffbench.backends import registry as backends
from neffbench.gui.run.history import verdict
from neffbench.gui.run.plots import CPU_COLOUR
from neffbench.gui.widgets import theme
from neffbench.kernels.bucket_words import bucket_phrase
from neffbench.runs.summary import numerics_text
from neffbench.views.job import JobView


def subject_text(subject: Any) -> tuple[str, bool]:
    """A RunSubject in a few lines of rich text, and whether it runs only on the CPU (a cpu-check job)."""
    job = JobView.of(subject.record)
    rows = []
    if subject.job_dir is not None:
        rows.append(f"<b>Job</b> {job.job_id or subject.job_dir.name}")
    bucket = job.bucket
    if bucket:
        rows.append(f"<b>Bucket</b> {bucket_phrase(bucket)}")
    if subject.backend:
        rows.append(f"<b>Backend</b> {subject.backend}")
    line = " &nbsp;·&nbsp; ".join(rows)
    if subject.neff is not None:
        return (f"{line}<br>" if line else "") + f"<b>NEFF</b> {subject.neff}", False
    cpu_only = backends.makes_no_neff(subject.backend)
    why = (
        (
            f"<span style='color:{CPU_COLOUR}'><b>No NEFF</b>: this is a cpu-check job (the Neuron toolchain was not "
            "used), so runs time the job's module on this computer's CPU. Those are CPU figures, not NeuronCore "
            "ones.</span>"
        )
        if cpu_only
        else f"<b>No NEFF</b> in {subject.job_dir}."
    )
    return f"{line}<br>{why}", cpu_only


def _badge(colour: str) -> str:
    return f"QLabel {{ background: {colour}; color: white; border-radius: 4px; padding: 2px 8px; font-weight: bold; }}"


class RunStatus(QWidget):
    """The stage badge and status line; the numerics verdict; the checks' problems when a run refused to start."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.stage_label = QLabel()
        self.stage_label.setObjectName("run-stage")
        self.status_label = QLabel()
        self.status_label.setObjectName("run-status")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict_label = QLabel()
        self.verdict_label.setObjectName("run-verdict")
        self.numerics_label = QLabel()
        self.numerics_label.setObjectName("run-numerics")
        self.numerics_label.setWordWrap(True)
        self.problems_label = QLabel()
        self.problems_label.setObjectName("run-problems")
        self.problems_label.setWordWrap(True)
        self.problems_label.setStyleSheet(f"color: {theme.BAD};")
        self.problems_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress_bar = QProgressBar(objectName="run-progress", textVisible=True)  # type: ignore[call-arg]  # a Qt property keyword
        self.progress_bar.setMinimumWidth(280)
        self.progress_bar.setMaximumWidth(420)
        status = QHBoxLayout()
        status.addWidget(self.stage_label, 0, Qt.AlignmentFlag.AlignTop)
        status.addWidget(self.status_label, 1)
        numerics = QHBoxLayout()
        numerics.addWidget(self.verdict_label, 0, Qt.AlignmentFlag.AlignTop)
        numerics.addWidget(self.numerics_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(status)
        layout.addWidget(self.progress_bar)  # a line of its own: the status sentence beside it wraps
        layout.addLayout(numerics)
        layout.addWidget(self.problems_label)
        self.set_stage("idle", None)
        self.show_verdict(None)
        self.show_problems([])
        self.show_progress(None)

    def set_stage(self, text: str, good: bool | None, *, live: bool = False) -> None:
        """Blue while a run goes; then green, red, or grey (cancelled, idle)."""
        self.stage_label.setText(text)
        self.stage_label.setStyleSheet(_badge(theme.ROTATED) if live else theme.badge_style(good))

    def set_text(self, text: str, colour: str | None = None) -> None:
        self.status_label.setText(text)
        self.status_label.setStyleSheet(f"color: {colour};" if colour else "")

    def show_progress(self, event: dict | None) -> None:
        """The run child's ``progress``: iteration i of N of the warm-up or the timed calls (None: hidden). A
        runtime that times the calls itself (nrtpy, spike) reports no count: the bar then only shows it is busy."""
        self.progress_bar.setVisible(event is not None)
        if event is None:
            return
        total, done = int(event.get("total") or 0), int(event.get("done") or 0)
        phase = "warm-up" if event.get("phase") == "warmup" else "timed"
        if event.get("counted", True) and total:
            self.progress_bar.setRange(0, total)
            self.progress_bar.setValue(min(done, total))
            self.progress_bar.setFormat(f"{phase} iteration {done:,} of {total:,}")
        else:
            self.progress_bar.setRange(0, 0)  # busy: the runtime's own benchmark counts for itself
            self.progress_bar.setFormat(f"{phase}: {total:,} in the runtime")
        self.progress_bar.setToolTip(f"{phase} iteration {done:,} of {total:,}")

    def show_verdict(self, numerics: dict | None) -> None:
        """match / MISMATCH, coloured, with the max abs error and the tolerance; hidden until there is one."""
        self.verdict_label.setVisible(numerics is not None)
        self.numerics_label.setVisible(numerics is not None)
        if numerics is None:
            return
        word, good = verdict(numerics)
        self.verdict_label.setText(word)
        self.verdict_label.setStyleSheet(theme.badge_style(good))
        self.numerics_label.setText(numerics_text(numerics))

    def show_problems(self, problems: list[str]) -> None:
        self.problems_label.setText("\n".join(f"• {p}" for p in problems))
        self.problems_label.setVisible(bool(problems))
