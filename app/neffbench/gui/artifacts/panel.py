"""The Artifacts tab: the workdir's NEFFs and jobs, kept current by a file-system watcher, with detail,
diff and the actions a user takes on a job."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QTreeWidgetItemIterator,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import QSignalDebouncer

from neffbench.gui.artifacts.detail import fill_diff, fill_job, fill_neff
from neffbench.gui.compile.log_files_window import show_job_logs
from neffbench.gui.explain.view import ExplanationView
from neffbench.gui.widgets import background, theme
from neffbench.gui.widgets.desktop import no_launcher, open_path
from neffbench.gui.widgets.flow import flow_row
from neffbench.gui.widgets.readable import elide_with_tooltips
from neffbench.jobs.summary import human_bytes, outcome_label
from neffbench.jobs.workdir_jobs import Artifact, delete_job, grouped, scan
from neffbench.spec import SpecError, from_dict
from neffbench.words import plural

COLUMNS = ("Name", "Job", "Outcome", "Size", "Created", "Inputs → outputs", "Compiler", "Target")
IO_COLUMN = COLUMNS.index("Inputs → outputs")
# The most a column takes of the list's width before its text is elided in the middle (the whole of it in a
# tooltip): every column keeps room in the narrowest window; the inputs and outputs take what is left.
MOST_WIDTH = {"Name": 0.15, "Job": 0.26, "Outcome": 0.14, "Size": 0.08, "Created": 0.17, "Compiler": 0.1, "Target": 0.1}
# Below this list width the columns the NEFF tab below also shows step aside for the others.
NARROW_PX = 900
SECONDARY = ("Compiler", "Target")
DIFF_HEADERS = ("Section", "Field", "A", "B")
RESCAN_DEBOUNCE_MS = 300


class ArtifactsPanel(QWidget):
    """Lists, details and acts on artifacts; ``spec_requested`` asks the window to load a job's spec."""

    spec_requested = Signal(object)
    run_requested = Signal(str)  # a job directory or a NEFF file, for the Run tab
    compare_requested = Signal(str)  # a job directory, for the Numerics tab
    scanned = Signal(int)  # rows listed, after each scan
    deleted = Signal(str)
    message = Signal(str)  # what an action did, for the status bar

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.workdir: Path | None = None
        self.artifacts: list[Artifact] = []
        self.confirm: Callable[[str], bool] = self._ask
        self.no_launcher = no_launcher  # tests replace it
        self._scanning = False
        self._scanned: Path | None = None  # the workdir the scan under way reads
        self._rescan_wanted = False
        self._worker: background.Task | None = None
        self._delete_worker: background.Task | None = None
        self._select_after_scan: str | None = None
        self._content_widths: dict[int, int] = {}
        self._watcher = QFileSystemWatcher(self)
        self._debouncer = QSignalDebouncer(parent=self)
        self._debouncer.setTimeout(RESCAN_DEBOUNCE_MS)
        self._build()
        self._watcher.directoryChanged.connect(self._debouncer.throttle)
        self._debouncer.triggered.connect(self.rescan)

    def _build(self) -> None:
        self.list = QTreeWidget()
        self.list.setObjectName("artifactList")
        self.list.setHeaderLabels(list(COLUMNS))
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setUniformRowHeights(True)
        self.list.header().setStretchLastSection(False)  # the inputs and outputs take the room left (_fit_columns)
        self.summary = QLabel()
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.setShortcut(QKeySequence.StandardKey.Refresh)
        self.rescan_button.setToolTip("Scan the workdir again (it is also watched for changes). F5")
        self.buttons: dict[str, QPushButton] = {}
        actions = (
            ("open", "Open folder", "Open the job's directory in the file manager."),
            ("copy_path", "Copy path", "Copy the NEFF's (or job directory's) path."),
            ("logs", "Logs…", "The job's log, its events and the compiler's own logs, whole and searchable."),
            ("copy_reproduce", "Copy reproduce.py", "Copy the job's stand-alone reproduction script."),
            ("reopen", "Re-open spec", "Load the job's spec into the form."),
            ("run", "Run…", "Run and benchmark the job's NEFF (or the NEFF) in the Run tab."),
            ("compare", "Compare layer by layer…", "Where the job's outputs diverge, module by module (Numerics tab)."),
            ("delete", "Delete job…", "Delete the job's directory, NEFFs and log included."),
        )
        for key, text, tip in actions:
            self.buttons[key] = QPushButton(text, toolTip=tip, enabled=False)
        # The summary above the buttons, and the buttons in a flow: a narrow window wraps them.
        self.summary.setWordWrap(True)
        bar = QVBoxLayout()
        bar.addWidget(self.summary)
        bar.addWidget(flow_row(*self.buttons.values(), self.rescan_button))

        self.detail = QTreeWidget()
        self.detail.setHeaderLabels(["Field", "Value"])
        self.detail.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.job_detail = QTreeWidget()
        self.job_detail.setHeaderLabels(["Field", "Value"])
        self.job_detail.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.spec_text = QPlainTextEdit(readOnly=True)
        self.spec_text.setPlaceholderText("The job's spec, as TOML.")
        self.job_splitter = QSplitter(Qt.Orientation.Vertical)
        self.job_splitter.addWidget(self.job_detail)
        self.job_splitter.addWidget(self.spec_text)
        self.diff = QTreeWidget()
        self.diff.setHeaderLabels(list(DIFF_HEADERS))
        self.diff.setRootIsDecorated(False)
        for col in (2, 3):  # the two sides get the same width
            self.diff.header().setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        for view in (self.list, self.detail, self.job_detail, self.diff):
            elide_with_tooltips(view)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a job id's time and hash both stay in sight
        self.tabs = QTabWidget()
        self.tabs.addTab(self.detail, "NEFF")
        self.tabs.addTab(self.job_splitter, "Job")
        self.tabs.addTab(self.diff, "Diff")
        self.explanation = ExplanationView()
        self.tabs.addTab(self.explanation, "Log explained")
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.list)
        self.splitter.addWidget(self.tabs)
        self.splitter.setSizes([300, 450])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)

        self.list.itemSelectionChanged.connect(self._on_list_item_selection_changed)
        self.rescan_button.clicked.connect(self.rescan)
        for key, button in self.buttons.items():
            button.clicked.connect(getattr(self, f"_on_{key}_button_clicked"))
        self._show_selection([])

    # ---- scanning ----

    def set_workdir(self, workdir: str | Path, *, rescan: bool = True) -> None:
        """Another workdir: nothing of the one before stays on show (its rows, a diff of two of them)."""
        workdir = Path(workdir)
        if workdir != self.workdir:
            self.workdir = workdir
            self._fill([])
        if rescan:
            self.rescan()

    def rescan(self) -> None:
        """Scan on a worker thread; a request during a scan runs one more scan afterwards."""
        if self.workdir is None:
            return
        if self._scanning:
            self._rescan_wanted = True
            return
        self._scanning = True
        self._scanned = self.workdir
        self.summary.setText(f"Scanning {self.workdir}…")
        # The reference keeps the worker (and its signals) alive until its result is delivered.
        self._worker = background.start(
            scan, self.workdir, returned=self._on_scan_returned, errored=self._on_scan_errored
        )

    def select(self, key: str) -> None:
        """Select the row of a NEFF path or job directory, now or after the scan running now."""
        for item in self._items():
            art = self.artifacts[item.data(0, Qt.ItemDataRole.UserRole)]
            if art.key == key or str(art.job_dir) == key:
                flags = QItemSelectionModel.SelectionFlag
                self.list.setCurrentItem(item, 0, flags.ClearAndSelect | flags.Rows)
                self.list.scrollToItem(item)
                return
        self._select_after_scan = key

    def _items(self) -> list[QTreeWidgetItem]:
        """Every row, a variant's under its job included."""
        found = []
        it = QTreeWidgetItemIterator(self.list)
        while it.value() is not None:
            found.append(it.value())
            it += 1
        return found

    def _on_scan_returned(self, artifacts: list[Artifact]) -> None:
        if self._scanned != self.workdir:  # of the workdir before: the scan of this one follows
            self._rescan_wanted = True
            self._finish_scan()
            return
        self._finish_scan()
        self._fill(artifacts)
        self._watch()
        if self._select_after_scan:
            key, self._select_after_scan = self._select_after_scan, None
            self.select(key)
        self.scanned.emit(len(artifacts))

    def _on_scan_errored(self, exc: Exception) -> None:
        self._finish_scan()
        self.summary.setText(f"Cannot scan {self.workdir}: {exc}")

    def _finish_scan(self) -> None:
        self._scanning = False
        self._worker = None
        if self._rescan_wanted:
            self._rescan_wanted = False
            self._debouncer.throttle()

    def _watch(self) -> None:
        dirs = {str(self.workdir)} if self.workdir and self.workdir.is_dir() else set()
        dirs |= {str(a.job_dir) for a in self.artifacts if a.job_dir and a.job_dir.is_dir()}
        if not dirs and self.workdir is not None and self.workdir.parent.is_dir():
            dirs = {str(self.workdir.parent)}  # to notice the workdir being created
        stale = set(self._watcher.directories()) - dirs
        if stale:
            self._watcher.removePaths(list(stale))
        new = dirs - set(self._watcher.directories())
        if new:
            self._watcher.addPaths(sorted(new))

    def _fill(self, artifacts: list[Artifact]) -> None:
        selected = {self.artifacts[i.data(0, Qt.ItemDataRole.UserRole)].key for i in self.list.selectedItems()}
        self.artifacts = artifacts
        index = {id(art): n for n, art in enumerate(artifacts)}
        self.list.blockSignals(True)
        self.list.clear()
        for art, variants in grouped(artifacts):
            item = self._row(art, index[id(art)])
            self.list.addTopLevelItem(item)
            for variant in variants:  # a compare's tapped job, a profiled variant: under their job, folded
                item.addChild(self._row(variant, index[id(variant)]))
            if variants:
                item.setToolTip(1, f"{item.toolTip(1)}\n{plural(len(variants), 'internal variant')} below it")
            for row in (item, *(item.child(c) for c in range(item.childCount()))):
                assert row is not None  # c < childCount()
                row.setSelected(artifacts[row.data(0, Qt.ItemDataRole.UserRole)].key in selected)
        self.list.blockSignals(False)
        self._fit_columns()
        neffs = sum(1 for a in artifacts if a.neff)
        others = len(artifacts) - neffs
        text = f"{neffs} NEFF{'s' if neffs != 1 else ''}"
        if others:
            text += f" and {others} job{'s' if others != 1 else ''} that made none"
        self.summary.setText(f"{text} in {self.workdir}" if artifacts else f"Nothing compiled yet in {self.workdir}")
        self._on_list_item_selection_changed()

    def _row(self, art: Artifact, index: int) -> QTreeWidgetItem:
        item = QTreeWidgetItem(
            [
                art.name,
                art.job_id,
                outcome_label(art.job, art.outcome),
                human_bytes(art.size) if art.size is not None else "",
                art.created,
                art.io,
                art.compiler_version,
                art.target,
            ]
        )
        item.setData(0, Qt.ItemDataRole.UserRole, index)
        item.setToolTip(IO_COLUMN, art.io)
        item.setToolTip(1, str(art.job_dir or ""))
        item.setForeground(2, QColor(theme.JOB_OUTCOME_COLOURS.get(art.outcome, theme.ORIGINAL)))
        if art.neff is not None and art.neff.info is None:
            item.setForeground(IO_COLUMN, QColor(theme.BAD))
            item.setToolTip(IO_COLUMN, art.neff.error or "")
        elif art.neff is None:
            item.setForeground(0, QColor(theme.ORIGINAL))
            item.setToolTip(0, "This job made no NEFF: " + art.io if art.io else "This job made no NEFF.")
        return item

    def _fit_columns(self, *, measure: bool = True) -> None:
        """Each column as wide as its text, up to its share of the list's width (then elided); in a narrow list the
        compiler and target are left to the NEFF tab."""
        width = self.list.viewport().width()
        for col, title in enumerate(COLUMNS):
            if title in SECONDARY:
                self.list.setColumnHidden(col, 0 < width < NARROW_PX)
            if col == IO_COLUMN:
                continue
            if measure:
                self.list.resizeColumnToContents(col)
                self._content_widths[col] = self.list.columnWidth(col)
            share = MOST_WIDTH.get(title)
            most = int(share * width) if share is not None and width > 0 else None
            content = self._content_widths.get(col, self.list.columnWidth(col))
            self.list.setColumnWidth(col, content if most is None else min(content, most))
        header = self.list.header()
        others = sum(
            header.sectionSize(c) for c in range(header.count()) if c != IO_COLUMN and not header.isSectionHidden(c)
        )
        self.list.setColumnWidth(IO_COLUMN, max(width - others, header.minimumSectionSize()))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_columns(measure=False)  # the layout has given the list its new width already

    # ---- selection and detail ----

    def selected(self) -> list[Artifact]:
        rows = sorted(i.data(0, Qt.ItemDataRole.UserRole) for i in self.list.selectedItems())
        return [self.artifacts[row] for row in rows]

    def _on_list_item_selection_changed(self) -> None:
        self._show_selection(self.selected())

    def _show_selection(self, chosen: list[Artifact]) -> None:
        one = chosen[0] if len(chosen) == 1 else None
        job_dir = one.job_dir if one is not None else None
        has_job = job_dir is not None
        self.buttons["open"].setEnabled(one is not None)
        self.buttons["copy_path"].setEnabled(one is not None)
        self.buttons["logs"].setEnabled(has_job)
        self.buttons["copy_reproduce"].setEnabled(job_dir is not None and (job_dir / "reproduce.py").is_file())
        self.buttons["reopen"].setEnabled(has_job and one is not None and bool(one.job and one.job.spec))
        self.buttons["delete"].setEnabled(has_job)
        self.buttons["run"].setEnabled(has_job or (one is not None and one.neff is not None))
        self.buttons["compare"].setEnabled(has_job and one is not None and one.outcome == "succeeded")
        self.detail.clear()
        self.job_detail.clear()
        self.spec_text.clear()
        self.diff.clear()
        self.diff.setHeaderLabels(list(DIFF_HEADERS))  # not the last pair's names
        self.tabs.setTabEnabled(2, len(chosen) == 2)
        if job_dir is not None and (job_dir / "job.log").is_file():
            self.explanation.explain_path(job_dir)
        else:
            self.explanation.clear()
        if one is not None:
            fill_neff(self.detail, one)
            fill_job(self.job_detail, self.spec_text, one)
            if self.tabs.currentIndex() == 2:
                self.tabs.setCurrentIndex(0 if one.neff else 1)
        elif len(chosen) == 2:
            fill_diff(self.diff, *chosen)
            self.tabs.setCurrentIndex(2)

    # ---- actions ----

    def _one(self) -> Artifact | None:
        chosen = self.selected()
        return chosen[0] if len(chosen) == 1 else None

    def _on_run_button_clicked(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1:
            art = chosen[0]
            self.run_requested.emit(str(art.job_dir) if art.job_dir is not None else art.key)

    def _on_compare_button_clicked(self) -> None:
        art = self._one()
        if art is not None and art.job_dir is not None:
            self.compare_requested.emit(str(art.job_dir))

    def _on_open_button_clicked(self) -> None:
        art = self._one()
        if art is not None:
            folder = art.job_dir or Path(art.key).parent  # no job: its NEFF's
            open_path(folder, self, tell=self.message.emit, fallback=self.no_launcher)

    def _on_logs_button_clicked(self) -> None:
        art = self._one()
        if art is not None and art.job_dir is not None:
            show_job_logs(art.job_dir, self)

    def _on_copy_path_button_clicked(self) -> None:
        art = self._one()
        if art is not None:
            path = art.neff.path if art.neff else str(art.job_dir)
            QGuiApplication.clipboard().setText(path)
            self.message.emit(f"Copied the path {path}")

    def _on_copy_reproduce_button_clicked(self) -> None:
        art = self._one()
        if art is not None and art.job_dir is not None:
            script = art.job_dir / "reproduce.py"
            try:
                text = script.read_text(encoding="utf-8")
            except OSError as exc:
                self.summary.setText(f"Cannot read {script}: {exc}")
                self.message.emit(f"Not copied: cannot read {script}")
                return
            QGuiApplication.clipboard().setText(text)
            self.message.emit(f"Copied reproduce.py of {art.job_dir.name} ({plural(len(text.splitlines()), 'line')})")

    def _on_reopen_button_clicked(self) -> None:
        art = self._one()
        if art is None or not (art.job and art.job.spec):
            return
        try:
            spec = from_dict(art.job.spec)
        except SpecError as exc:
            self.summary.setText(f"This job's spec no longer loads: {exc}")
            return
        self.spec_requested.emit(spec)

    def _on_delete_button_clicked(self) -> None:
        art = self._one()
        if art is None or art.job_dir is None or self.workdir is None:
            return
        if not self.confirm(
            f"Delete job {art.job_dir.name}?\n\nIts directory, NEFFs, log and record are removed "
            "from disk. This cannot be undone."
        ):
            return
        self.summary.setText(f"Deleting {art.job_dir.name}…")
        job_dir = str(art.job_dir)
        self._delete_worker = background.start(
            delete_job,
            self.workdir,
            art.job_dir,
            returned=functools.partial(self._on_delete_worker_returned, job_dir),
            errored=self._on_delete_worker_errored,
        )

    def _on_delete_worker_returned(self, job_dir: str, _result: object = None) -> None:
        self._delete_worker = None
        self.deleted.emit(job_dir)
        self.message.emit(f"Deleted {Path(job_dir).name}")
        self.rescan()

    def _on_delete_worker_errored(self, exc: Exception) -> None:
        self._delete_worker = None
        self.summary.setText(f"Not deleted: {exc}")
        self.message.emit(f"Not deleted: {exc}")

    def _ask(self, text: str) -> bool:
        answer = QMessageBox.question(
            self,
            "Delete job",
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes
