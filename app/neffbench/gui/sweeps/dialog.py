"""The sweep dialog: pick fields and their values, see the points, the invalid ones and the memory before starting."""

from __future__ import annotations

import functools
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import QSignalDebouncer

from neffbench.gui.forms.memory_note import MemoryNote
from neffbench.gui.sweeps.controller import SweepOptions
from neffbench.gui.widgets import theme, wheel
from neffbench.views.sweep import point_number

GiB = 1024**3


class _AxisRow:
    """One swept field: which, and its values as typed (``1,2,3``, ``[1,8],[32]``)."""

    def __init__(self, fields: list[Any], grid: QGridLayout, row: int, on_change):
        from neffbench.sweeps.fields import display_labels

        self.field = wheel.guard(QComboBox())
        self.field.setObjectName(f"sweep-field-{row}")
        shown = display_labels(fields)
        for f in fields:
            self.field.addItem(shown[f.name], f.name)
            tip = f"{f.help}\n\nOn the command line: neffbench sweep … --over {f.name}=V1,V2".strip()
            self.field.setItemData(self.field.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self._fields = {f.name: f for f in fields}
        self.values = QLineEdit()
        self.values.setObjectName(f"sweep-values-{row}")
        self.remove = QPushButton("Remove")
        grid.addWidget(self.field, row, 0)
        grid.addWidget(self.values, row, 1)
        grid.addWidget(self.remove, row, 2)
        self.field.currentIndexChanged.connect(self._show_hint)
        self.field.currentIndexChanged.connect(on_change)
        self.values.textChanged.connect(on_change)
        self._show_hint()

    def _show_hint(self) -> None:
        from neffbench.sweeps import words_of

        f = self._fields.get(self.field.currentData())
        if f is None:
            return
        choices = f" — one of {', '.join(f.choices)}" if f.choices else ""
        self.values.setPlaceholderText(f"values separated by commas (the form has {words_of(f.current)}){choices}")

    def over(self) -> tuple[str, str] | None:
        text = self.values.text().strip()
        return (self.field.currentData(), text) if text else None

    def widgets(self) -> tuple[QWidget, ...]:
        return self.field, self.values, self.remove


class SweepDialog(QDialog):
    """``plan`` is the sweep of the form's spec as the dialog stands; Start is enabled when it has a point to run."""

    def __init__(self, spec: Any, parent: QWidget | None = None, *, backend: str = "auto"):
        super().__init__(parent)
        from neffbench.sweeps.fields import display_labels, sweepable

        self.setWindowTitle("Sweep")
        self.spec, self.backend = spec, backend
        self.plan: Any = None
        # The valid points the workdir's cache will serve, once looked up (None: being looked up).
        self.cached: frozenset[int] | None = None
        self._cache_problem: str | None = None
        self._lookups = 0  # only the newest plan's lookup is shown
        self._worker: Any = None
        self._fields = sweepable(spec)
        self._rows: list[_AxisRow] = []
        self._grid = QGridLayout()
        self._grid.setColumnStretch(1, 1)
        self._grid.addWidget(QLabel("<b>Field</b>"), 0, 0)
        self._grid.addWidget(QLabel("<b>Values</b>"), 0, 1)
        self.add_button = QPushButton("Add field")
        self.zip_check = QCheckBox("Pair the lists (zip) instead of every combination")
        self.executor_combo = QComboBox()
        self.executor_combo.addItem("this machine (local)", "local")
        self.executor_combo.addItem("a Ray cluster", "ray")
        self.address_edit = QLineEdit(placeholderText="auto, or ray://head:10001 (what ray.init takes)")
        self.jobs_spin = QSpinBox(minimum=1, maximum=256, value=1)
        self.jobs_spin.setToolTip("Jobs at once: never more than memory allows (the limiter waits instead).")
        self.memory_spin = QDoubleSpinBox(minimum=0.0, maximum=4096.0, decimals=1, singleStep=0.5, suffix=" GiB")
        self.memory_spin.setSpecialValueText("estimate")
        self.memory_spin.setToolTip("Memory one compile may take at its peak; 'estimate' uses the kernel's own.")
        self.strict_check = QCheckBox("Run nothing if any point is invalid")
        self.labels = display_labels(self._fields)
        self.grid_words = QLabel()
        self.grid_words.setObjectName("sweep-grid-words")
        self.grid_words.setWordWrap(True)
        self.summary = QLabel()
        self.summary.setObjectName("sweep-summary")
        self.summary.setWordWrap(True)
        self.memory_note = MemoryNote(allow_text="Start anyway")
        note_layout = self.memory_note.layout()
        assert note_layout is not None  # made with the note
        note_layout.setContentsMargins(0, 0, 0, 0)
        self.invalid_list = QListWidget()
        self.invalid_list.setObjectName("sweep-invalid")
        self.invalid_list.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_button = self.buttons.addButton("Start sweep", QDialogButtonBox.ButtonRole.AcceptRole)
        self._layout()
        self._debouncer = QSignalDebouncer(parent=self)
        self._debouncer.setTimeout(150)
        self._debouncer.triggered.connect(self.replan)
        for signal in (
            self.zip_check.toggled,
            self.memory_spin.valueChanged,
            self.jobs_spin.valueChanged,
            self.executor_combo.currentIndexChanged,
        ):
            signal.connect(self._debouncer.throttle)
        self.executor_combo.currentIndexChanged.connect(self._on_executor_changed)
        self.memory_note.allow_toggled.connect(self._update_start)
        self.add_button.clicked.connect(self.add_axis)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        wheel.guard_all(self)
        self.add_axis()
        self._on_executor_changed()
        self.replan()

    def _layout(self) -> None:
        options = QFormLayout()
        options.addRow("Run on", self.executor_combo)
        options.addRow("Ray address", self.address_edit)
        options.addRow("Jobs at once", self.jobs_spin)
        options.addRow("Memory per job", self.memory_spin)
        options.addRow("", self.zip_check)
        options.addRow("", self.strict_check)
        top = QHBoxLayout()
        top.addStretch(1)
        top.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel(
                f"Sweep <b>{self.spec.name}</b>: each point is an ordinary job, compiled "
                "(or served from the cache) like any other."
            )
        )
        layout.addLayout(self._grid)
        layout.addLayout(top)
        layout.addWidget(self.grid_words)
        layout.addLayout(options)
        layout.addWidget(self.summary)
        layout.addWidget(self.memory_note)
        layout.addWidget(self.invalid_list, 1)
        layout.addWidget(self.buttons)
        self.resize(720, 520)

    # ---- the grid ----

    def add_axis(self, name: str | None = None, values: str = "") -> _AxisRow:
        row = _AxisRow(self._fields, self._grid, len(self._rows) + 1, self._debouncer.throttle)
        if name is not None:
            row.field.setCurrentIndex(max(0, row.field.findData(name)))
        row.values.setText(values)
        row.remove.clicked.connect(lambda: self._remove(row))
        self._rows.append(row)
        self._debouncer.throttle()
        return row

    def _remove(self, row: _AxisRow) -> None:
        for widget in row.widgets():
            self._grid.removeWidget(widget)
            widget.deleteLater()
        self._rows.remove(row)
        self._debouncer.throttle()

    def overs(self) -> list[tuple[str, str]]:
        return [o for o in (r.over() for r in self._rows) if o is not None]

    def options(self) -> SweepOptions:
        return SweepOptions(
            executor=self.executor_combo.currentData(),
            jobs=self.jobs_spin.value(),
            address=self.address_edit.text().strip() or None,
            backend=self.backend,
            strict=self.strict_check.isChecked(),
        )

    def _on_executor_changed(self) -> None:
        self.address_edit.setEnabled(self.executor_combo.currentData() == "ray")

    # ---- what it will run ----

    def replan(self) -> None:
        from neffbench.sweeps import plan

        memory = self.memory_spin.value()
        self.plan = plan(
            self.spec,
            self.overs(),
            zip=self.zip_check.isChecked(),
            backend=self.backend,
            memory_per_job=memory * GiB if memory > 0 else None,
        )
        self.invalid_list.clear()
        for problem in self.plan.problems:
            self.invalid_list.addItem(f"✖ {in_words(problem.message, self.labels)}")
        for point in self.plan.invalid:
            reasons = "; ".join(p.message for p in point.errors) or "invalid"
            self.invalid_list.addItem(f"Point {point_number(point.index)} ({point.words(self.labels)}): {reasons}")
        self.grid_words.setText(grid_words(self.plan, self.labels))
        self.summary.setStyleSheet(f"color: {theme.BAD};" if self._refused() or not self.plan.valid else "")
        from neffbench.jobs.memory_verdict import plan_verdict

        self.memory_note.show_verdict(plan_verdict(self.plan))
        self._update_start()
        self._look_up_cached()

    def _refused(self) -> bool:
        return bool(self.plan.problems) or (self.strict_check.isChecked() and bool(self.plan.invalid))

    def _update_start(self) -> None:
        refused = self._refused() or self.memory_note.refused()
        self.start_button.setEnabled(not refused and bool(self.plan.valid))

    def _look_up_cached(self) -> None:
        """Which valid points the cache will serve: a pass over the workdir's records, on a worker thread."""
        from neffbench.gui.widgets import background
        from neffbench.sweeps.sweep import cached_points

        self._lookups += 1
        self.cached, self._cache_problem = None, None
        workdir = self.spec.workdir
        if not self.plan.valid or not workdir:
            self.cached = frozenset()
        else:
            self._worker = background.start(
                cached_points,
                self.plan,
                workdir,
                self.backend,
                returned=functools.partial(self._on_worker_returned, self._lookups),
                errored=functools.partial(self._on_worker_errored, self._lookups),
            )
        self._show_summary()

    def _on_worker_returned(self, lookup: int, cached: frozenset[int]) -> None:
        if lookup == self._lookups:
            self.cached = cached
            self._show_summary()

    def _on_worker_errored(self, lookup: int, exc: BaseException) -> None:
        if lookup == self._lookups:
            self.cached, self._cache_problem = frozenset(), f"the cache could not be looked in: {exc}"
            self._show_summary()

    def _show_summary(self) -> None:
        text = summary_text(self.plan, self.jobs_spin.value(), self.cached)
        self.summary.setText(text + (f" ({self._cache_problem})" if self._cache_problem else ""))


def grid_words(plan: Any, labels: dict[str, str]) -> str:
    """``Opt level: 1, 2 and 7 × Tokens (buckets): 1 and 8, every combination.``: the grid as read, in words."""
    from neffbench.sweeps import words_of

    if not plan.axes:
        return ""
    axes = [f"{labels.get(a.field, a.field)}: {words_of(list(a.values))}" for a in plan.axes]
    how = "paired in order" if plan.zip else "every combination"
    return (" × " if not plan.zip else " with ").join(axes) + (f", {how}." if len(axes) > 1 else ".")


def in_words(message: str, labels: dict[str, str] | None = None) -> str:
    """A plan problem as the dialog says it: rows and values, not the command line's ``--over``."""
    from neffbench.sweeps.grid import NO_AXES, SWEPT_TWICE

    if message == NO_AXES:
        return "choose a field and type its values, separated by commas, in a row above"
    if message.endswith(SWEPT_TWICE):
        name = message.removesuffix(SWEPT_TWICE)
        return f"{(labels or {}).get(name, name)} is in two rows: give all its values in one row"
    return message


def summary_text(plan: Any, jobs: int, cached: frozenset[int] | None = frozenset()) -> str:
    """``6 points: 2 to compile, 3 from the cache, 1 invalid · up to 2.5 GiB per job; 2 at once need up to 5.0 GiB``.

    ``cached``: the valid points the cache will serve (None while they are being looked up).
    """
    if plan.problems:
        return "Nothing to sweep yet: " + "; ".join(in_words(p.message) for p in plan.problems)
    valid, invalid = len(plan.valid), len(plan.invalid)
    text = f"{plan.count} point{'s' if plan.count != 1 else ''}: "
    if cached is None:
        text += f"{valid} valid (looking in the cache for the ones already compiled…)"
        compiling = list(plan.valid)
    else:
        compiling = [p for p in plan.valid if p.index not in cached]
        text += f"{len(compiling)} to compile" + (f", {len(cached)} from the cache" if cached else "")
    if invalid:
        text += f", {invalid} invalid (listed below; they are recorded, not run)"
    sizes = [p.memory for p in compiling if p.memory is not None]
    if sizes:
        largest = max(sizes, key=lambda m: m.bytes)
        at_once = min(jobs, len(compiling))
        text += f" · up to {largest.text()} per job"
        if at_once > 1:
            text += f"; {at_once} at once need up to {at_once * largest.bytes / GiB:.1f} GiB"
    return text
