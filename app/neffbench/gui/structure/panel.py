"""The Structure tab: a job's model as a searchable tree-table, each layer with its shapes, parameters, FLOPs, the
latest compare's error and the latest profile's device time, and the data flow between the selected module's
children drawn beside it.

Everything slow happens off the GUI thread: reading and laying the structure, computing one for a job compiled
before structures were kept (a probe child), laying out a drawing (in a child process, once per job: a level drawn
again looks as it did). ``node_selected(path)`` says which module the user picked (the window selects its tap in
the Numerics tab); ``select_path`` picks one without saying so.
"""

from __future__ import annotations

from functools import partial
from html import escape
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.structure.drawing import COLOUR_BY, FlowView
from neffbench.gui.structure.model import StructureModel
from neffbench.gui.widgets import background, theme
from neffbench.gui.widgets.flow import TurningSplitter, flow_row, kept_together
from neffbench.gui.widgets.readable import elide_with_tooltips
from neffbench.structure import cells, flow, layout, layout_child, table, tree_rows
from neffbench.structure.layers import Laid
from neffbench.structure.tree_rows import Rows

NO_JOB = "No job. Compile one, or choose one with Job… (a job directory)."
NO_STRUCTURE = (
    "This job has no structure: it was compiled before structures were kept, or its module's structure could not "
    "be read. Compute structure builds its module again from the job's spec (in a child process) and keeps it; "
    "from a shell: neffbench structure {job}"
)
RUN_HINT = " — a stacked box: alike layers, coloured by the worst; click it to draw each"
EXPAND_LEVELS = 2  # opened on show: the root and its children's children (a model's layers)
LAYOUTS_KEPT = 64  # a job's layouts kept: a level drawn again, or in the other colours, is not laid out again

Drawing = tuple[str, frozenset[str]]  # what a layout is of: the module whose children, the runs drawn whole


class StructurePanel(QWidget):
    node_selected = Signal(str)  # the user picked a module (its path)
    shown = Signal(object)  # the Laid now shown (None: nothing)
    drawn = Signal(str)  # the path whose data flow is now drawn

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job_dir: str | None = None
        self.other_dir: str | None = None
        self.laid: Laid | None = None
        self.other: Laid | None = None
        self.start_dir = str
        self._token = 0
        self._draw_token = 0
        self._hidden_paths: set[str] = set()  # the rows a search hides
        self._expanded: frozenset[str] = frozenset()  # the runs of alike layers drawn whole (their first paths)
        self._layouts: dict[Drawing, tuple[flow.Flow, layout.Laid | None]] = {}  # the least recently drawn first
        self._quiet = False
        self._build()
        self._wire()
        self.set_job(None)

    # ---- building ----

    def _build(self) -> None:
        self.job_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText, objectName="structure-job")
        self.job_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.search = QLineEdit(objectName="structure-search", placeholderText="Search modules (path or class)")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(180)
        self.job_button = QPushButton("Job…", objectName="structure-job-button")
        self.job_button.setToolTip("Show another job directory's structure.")
        self.compare_button = QPushButton("Compare with…", objectName="structure-compare-with")
        self.compare_button.setToolTip(
            "Another job's figures beside this one's, layer by layer (time, error and what differs), as "
            "neffbench diff A B --layers says them: another auto-cast, opt level or SDK."
        )
        self.compute_button = QPushButton("Compute structure", objectName="structure-compute")
        self.compute_button.setToolTip(
            "Build the job's module again from its spec, in a child process, and keep its structure."
        )
        self.colour_combo = QComboBox(objectName="structure-colour")  # type: ignore[call-arg]  # a Qt property keyword
        self.colour_combo.addItems(["error", "device time"])
        self.colour_combo.setToolTip(
            "What colours the drawing's boxes: the latest compare's error, or the share of time."
        )
        colour = QLabel("Colour by")
        colour.setBuddy(self.colour_combo)
        controls = flow_row(
            kept_together(self.search),
            kept_together(colour, self.colour_combo),
            kept_together(self.job_button, self.compare_button, self.compute_button),
        )
        self.sources_label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText, objectName="structure-sources")
        self.sources_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sources_label.setStyleSheet("color: #444444; font-size: 8.5pt;")
        self.model = StructureModel(self)
        self.tree = QTreeView(objectName="structure-tree")  # type: ignore[call-arg]  # a Qt property keyword
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)  # rows of one height: a long tree scrolls without measuring each
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSortingEnabled(False)
        self.tree.header().setSectionsClickable(True)
        self.tree.header().setSortIndicatorShown(False)
        self.tree.setAlternatingRowColors(True)
        elide_with_tooltips(self.tree)
        self.flow_view = FlowView()
        self.flow_title = QLabel(wordWrap=True, objectName="structure-flow-title")
        self.detail = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText, objectName="structure-detail")
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.flow_title)
        right_layout.addWidget(self.flow_view, 1)
        right_layout.addWidget(self.detail)
        right.setMinimumWidth(260)
        self.tree.setMinimumWidth(320)
        self.splitter = TurningSplitter()
        self.splitter.setObjectName("structure-splitter")
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(right)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([640, 420])
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(6, 6, 6, 6)
        layout_.setSpacing(4)
        for widget in (self.job_label, controls, self.sources_label):
            layout_.addWidget(widget)
        layout_.addWidget(self.splitter, 1)

    def _wire(self) -> None:
        self.search.textChanged.connect(self._on_search_text_changed)
        self.tree.selectionModel().currentRowChanged.connect(self._on_tree_current_row_changed)
        self.tree.header().sectionClicked.connect(self._on_header_section_clicked)
        self.flow_view.module_clicked.connect(self._on_flow_view_module_clicked)
        self.flow_view.run_clicked.connect(self._on_flow_view_run_clicked)
        self.job_button.clicked.connect(self._on_job_button_clicked)
        self.compare_button.clicked.connect(self._on_compare_button_clicked)
        self.compute_button.clicked.connect(self._on_compute_button_clicked)
        self.colour_combo.currentIndexChanged.connect(self._on_colour_combo_current_index_changed)

    # ---- the job ----

    def set_job(self, job_dir: str | Path | None, *, other: str | Path | None = None) -> None:
        """Show ``job_dir``'s structure (None: no job), read off the GUI thread; ``other``: a job shown beside it."""
        self.job_dir = str(job_dir) if job_dir else None
        self.other_dir = str(other) if other else None
        self._token += 1
        self._draw_token += 1  # a drawing of the job before is not shown
        self._layouts = {}
        self.laid = self.other = None
        self._hidden_paths = set()
        self.model.show(None)
        self.flow_view.clear()
        self.flow_title.clear()
        self.detail.clear()
        self.detail.setToolTip("")
        self.sources_label.clear()
        self.compute_button.setVisible(False)
        self.compare_button.setEnabled(False)
        self.job_label.setText(f"Reading {escape(self.job_dir)}…" if self.job_dir else NO_JOB)
        if self.job_dir:
            background.start(_read, self._token, self.job_dir, self.other_dir, returned=self._on_read_returned)
            background.start(layout_child.start)  # ready by the time the read is: drawings are laid out there
        else:
            self.shown.emit(None)

    def reload(self) -> None:
        """Read the job again (a compare or a profile since)."""
        if self.job_dir:
            self.set_job(self.job_dir, other=self.other_dir)

    def _on_read_returned(self, answer: tuple[int, Rows | None, Laid | None, str | None]) -> None:
        token, rows, other, problem = answer
        if token != self._token:
            return  # another job chosen since
        laid = rows.laid if rows is not None else None
        self.laid, self.other = laid, other
        name = Path(self.job_dir or "").name
        if laid is None:
            self.job_label.setText(f"<b>{escape(name)}</b>")
            text = problem or NO_STRUCTURE.format(job=self.job_dir)
            self.sources_label.setText(f"<span style='color:{theme.WARN}'>{escape(text)}</span>")
            self.compute_button.setVisible(problem is None or "no structure" in (problem or ""))
            self.flow_view.clear("No structure to draw.")
            self.shown.emit(None)
            return
        self.job_label.setText(f"<b>{escape(table.headline(laid, name))}</b>")
        lines = table.sources(laid, self.job_dir or "")
        if other is not None:
            lines.append(f"beside it: {Path(self.other_dir or '').name} (the columns marked B)")
        if problem:
            lines.append(problem)
        self.sources_label.setText("<br>".join(escape(line) for line in lines))
        self.compare_button.setEnabled(True)
        self.model.show(rows)
        self.tree.expandToDepth(EXPAND_LEVELS - 1)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        wide = {"in → out": 150, "what differs": 220, "vs eager": 90, "vs float64": 110, "class": 110}
        header.resizeSection(0, 180)
        for column in range(1, self.model.columnCount()):
            header.resizeSection(column, wide.get(self.model.columns[column].heading, 72))
        self.select_path("", quiet=True)
        self.shown.emit(laid)

    # ---- selection ----

    def select_path(self, path: str, *, quiet: bool = True) -> bool:
        """Select module ``path`` (its rows above opened) and draw its children; False when there is no such row
        (another job, or filtered out by the search). ``quiet``: no ``node_selected``."""
        index = self.model.index_of(path)
        if not index.isValid() or self._hidden(path):
            return False
        self._quiet = quiet
        try:
            parent = index.parent()
            while parent.isValid():
                self.tree.expand(parent)
                parent = parent.parent()
            self.tree.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.tree.scrollTo(index)
        finally:
            self._quiet = False
        return True

    def _hidden(self, path: str) -> bool:
        """Whether a search hides ``path`` (or a module above it)."""
        probe: str | None = path
        while probe is not None and self.laid is not None:
            index = self.model.index_of(probe)
            if self.tree.isRowHidden(index.row(), index.parent()):
                return True
            probe = self.laid.structure.by_path[probe].parent
        return False

    def selected_path(self) -> str | None:
        return self.model.path_of(self.tree.selectionModel().currentIndex())

    def _on_tree_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        path = self.model.path_of(current)
        if path is None or self.laid is None:
            return
        self._expanded = frozenset()  # a level is first drawn with its runs folded
        self._draw(path)
        self._show_detail(path)
        if not self._quiet:
            self.node_selected.emit(path)

    def _draw(self, path: str) -> None:
        assert self.laid is not None
        self._draw_token += 1
        node = self.laid.structure.by_path[path]
        self.flow_title.setText(f"Data flow between the children of {path or node.cls} ({node.cls})")
        drawing = (path, self._expanded)
        kept = self._layouts.get(drawing)
        if kept is None:
            background.start(_lay_out, self._draw_token, self.laid, drawing, returned=self._on_lay_out_returned)
        else:  # drawn on the event loop's next turn, as a layout comes back from its thread
            QTimer.singleShot(0, self, partial(self._on_lay_out_returned, (self._draw_token, drawing, *kept)))

    def _on_lay_out_returned(self, answer: tuple[int, Drawing, flow.Flow, layout.Laid | None]) -> None:
        token, drawing, found, drawn = answer
        if token != self._draw_token:
            return
        self._layouts.pop(drawing, None)
        self._layouts[drawing] = (found, drawn)
        while len(self._layouts) > LAYOUTS_KEPT:
            del self._layouts[next(iter(self._layouts))]
        path = drawing[0]
        if drawn is None:  # nothing to lay out
            self.flow_view.clear(found.note or "Nothing to draw.")
        else:
            self.flow_view.show_flow(found, drawn, self.laid)
            if found.note:
                self.flow_title.setText(self.flow_title.text() + f" — {found.note}")
            if any(v.run for v in found.vertices):
                self.flow_title.setText(self.flow_title.text() + RUN_HINT)
        self.drawn.emit(path)

    def _show_detail(self, path: str) -> None:
        assert self.laid is not None
        layer = self.laid.layers[path]
        node = layer.node
        rows = [f"<b>{escape(path or '(the root)')}</b> {escape(node.cls)}"]
        rows.append(  # files by name: the whole paths are in the tooltip
            escape(cells.call_site(node, short=True))
            + (f"; its class's forward at {escape(cells.short_line(node.defined_at))}" if node.defined_at else "")
        )
        self.detail.setToolTip(
            "\n".join(x for x in (node.called_at, node.defined_at and f"its class's forward: {node.defined_at}") if x)
        )
        if node.inputs or node.outputs:
            rows.append(
                f"in: {escape(', '.join(str(t) for t in node.inputs) or '—')}; "
                f"out: {escape(', '.join(str(t) for t in node.outputs) or '—')}"
                + (f"; called {node.calls} times" if node.calls > 1 else "")
            )
        if node.ops:
            top = sorted(node.ops.items(), key=lambda kv: -kv[1])[:8]
            rows.append("its own operations: " + escape(", ".join(f"{k.replace('aten::', '')} ×{v}" for k, v in top)))
        if layer.time:
            t = layer.time
            rows.append(
                f"device time {cells.duration(t.seconds)} ({cells.percent(t.share)} of the NEFF); "
                f"{escape(cells.engines(layer) or 'no instructions')}; HBM {cells.count(t.hbm_bytes)} B, "
                f"SBUF {cells.count(t.sbuf_bytes)} B"
                + (
                    f"; {cells.count(t.flops_per_s)} FLOP/s, {cells.percent(t.peak_share)} of peak"
                    if t.flops_per_s
                    else ""
                )
            )
        for reference, label in (("vs_eager", "against eager"), ("vs_float64", "against float64")):
            figures = layer.error(reference)
            if figures:
                first = " <b>first divergent</b>" if reference in layer.first_divergent else ""
                rows.append(
                    f"{label}: {escape(cells.error(figures))}, max abs {figures.get('max_abs')}, "
                    f"cosine {figures.get('cosine')}{first}"
                )
        self.detail.setText("<br>".join(rows))

    # ---- controls ----

    def _on_search_text_changed(self, text: str) -> None:
        """Hide the rows the search does not keep, and open the ones above the matches."""
        if self.laid is None:
            return
        keep = self.model.matching(text.strip())
        self.model.fill_all()
        hidden = {n.path for n in self.laid.structure.nodes if n.path not in keep} if keep is not None else set()
        self.tree.setUpdatesEnabled(False)
        try:
            for path in hidden ^ self._hidden_paths:  # only the rows whose state changes
                index = self.model.index_of(path)
                self.tree.setRowHidden(index.row(), index.parent(), path in hidden)
            self._hidden_paths = hidden
            if keep is None:
                self.tree.collapseAll()
                self.tree.expandToDepth(EXPAND_LEVELS - 1)
            else:
                for path in keep:
                    if any(child in keep for child in self.laid.structure.by_path[path].children):
                        self.tree.expand(self.model.index_of(path))
        finally:
            self.tree.setUpdatesEnabled(True)

    def _on_header_section_clicked(self, section: int) -> None:
        """Sort by a figure's column (largest first); the module column goes back to the call order."""
        if section == 0:
            self.model.sort(-1)
        else:
            self.model.sort(section, Qt.SortOrder.DescendingOrder)

    def _on_flow_view_module_clicked(self, path: str) -> None:
        if self.select_path(path, quiet=False):
            return
        self.search.clear()  # a search hid it: show it all again
        self.select_path(path, quiet=False)

    def _on_flow_view_run_clicked(self, first: str) -> None:
        """A run of alike layers drawn whole: each its own box (picking the level again folds it)."""
        path = self.selected_path()
        if path is not None and self.laid is not None:
            self._expanded |= {first}
            self._draw(path)

    def _on_colour_combo_current_index_changed(self, index: int) -> None:
        self.flow_view.colour_by = COLOUR_BY[index]
        path = self.selected_path()
        if path is not None and self.laid is not None:
            self._draw(path)

    def _on_job_button_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a job directory", self.start_dir())
        if path:
            self.set_job(path)

    def _on_compare_button_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a job to set beside this one", self.start_dir())
        if path:
            self.set_job(self.job_dir, other=path)

    def _on_compute_button_clicked(self) -> None:
        if not self.job_dir:
            return
        self.compute_button.setEnabled(False)
        self.sources_label.setText("Computing the structure: the job's module is built again from its spec…")
        background.start(_compute, self._token, self.job_dir, returned=self._on_compute_returned)

    def _on_compute_returned(self, answer: tuple[int, str | None]) -> None:
        token, problem = answer
        self.compute_button.setEnabled(True)
        if token != self._token:
            return
        if problem:
            self.sources_label.setText(f"<span style='color:{theme.BAD}'>{escape(problem)}</span>")
            return
        self.reload()


def _read(token: int, job_dir: str, other_dir: str | None) -> tuple[int, Rows | None, Laid | None, str | None]:
    """(off the GUI thread) The job's rows, worded, and the other's laid structure; a sentence for what could not be
    read."""
    from neffbench.jobs.records import RECORD_NAME
    from neffbench.structure import layers
    from neffbench.structure.document import StructureError
    from neffbench.structure.rebuild import variant_of
    from neffbench.views.job import RecordError
    from neffbench.views.job_file import read_job

    try:
        job = read_job(Path(job_dir) / RECORD_NAME)
        laid = layers.lay(job_dir, job=job)
    except (StructureError, RecordError, OSError) as exc:
        return token, None, None, str(exc)
    if laid is None:
        of = variant_of(Path(job_dir))
        return token, None, None, (f"A variant of {of}: its structure is that job's." if of else None)
    other, problem = None, None
    if other_dir:
        try:
            other = layers.lay(other_dir, job=read_job(Path(other_dir) / RECORD_NAME))
        except (StructureError, RecordError, OSError) as exc:
            problem = f"The other job cannot be shown beside it: {exc}"
        if other is None and problem is None:
            problem = f"The other job ({Path(other_dir).name}) has no structure: open it and Compute structure first."
    return token, tree_rows.rows(laid, other), other, problem


def _lay_out(token: int, laid: Laid, drawing: Drawing) -> tuple[int, Drawing, flow.Flow, layout.Laid | None]:
    path, expanded = drawing
    found = flow.flow(laid.structure, path, expanded=expanded)
    return token, drawing, found, layout_child.lay_out(found) if found.vertices else None


def _compute(token: int, job_dir: str) -> tuple[int, str | None]:
    from neffbench.structure.document import StructureError
    from neffbench.structure.rebuild import compute

    try:
        compute(job_dir)
    except StructureError as exc:
        return token, str(exc)
    return token, None
