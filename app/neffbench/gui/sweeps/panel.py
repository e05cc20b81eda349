"""The Sweeps tab: a sweep's points as a table (sortable, filterable) and a chart against a swept field; two points diffed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.widgets import background, theme
from neffbench.gui.widgets.deferred import Deferred, DeferredPlotWidget
from neffbench.gui.widgets.empty_plot import reset_axes
from neffbench.gui.widgets.flow import TurningSplitter, flow_row
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.plot_titles import set_title
from neffbench.gui.widgets.readable import IntegerAxis, elide_with_tooltips, keep_readable, plain_axes, scrolling
from neffbench.views.sweep import SweepView, point_number

SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # numbers sort as numbers, "-" (unknown) last
# The chart's measures: (label, axis title, how to read it from a row).
METRICS = {
    "compile time": ("compile s", lambda r: r["compile_s"] if r["compile_s"] is not None else r["trace_s"]),
    "NEFF size": ("NEFF KiB", lambda r: r["neff_bytes"] / 1024 if r["neff_bytes"] else None),
    "run latency (p50)": ("p50 ms", lambda r: (r["latency"] or {}).get("p50_ms")),
    "peak memory": ("peak MiB", lambda r: r["peak_rss_bytes"] / 2**20 if r["peak_rss_bytes"] else None),
    # What --run and --compare record: accuracy to set against speed.
    "run error vs eager": ("max abs error", lambda r: (r["accuracy"] or {}).get("vs_eager")),
    "error vs float64": ("max abs error vs float64", lambda r: (r["accuracy"] or {}).get("vs_float64")),
}
# A chosen layer's figures (what `neffbench structure` lays on it): (axis title, figure, scale).
LAYER_METRICS = {
    "layer device time": ("device time µs", "time_s", 1e6),
    "layer error vs eager": ("max abs error vs eager", "vs_eager", 1.0),
    "layer error vs float64": ("max abs error vs float64", "vs_float64", 1.0),
}
DIFF_HEADERS = ("What", "A", "B")
# One colour per series (the points that share the other swept fields' values), told apart by the legend.
SERIES_COLOURS = ("#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f")
SELECTED_COLOUR = "#d62728"
METRIC_AXIS = "metric:"  # an x-axis choice that is a metric, not a swept field (latency against error)


def _load(token: int, workdir: str, sweep_id: str | None) -> tuple[int, list[dict], dict | None, list[dict]]:
    """On a worker thread: every sweep in the workdir, the chosen (else newest) one and its rows, each with its
    figures per layer."""
    from neffbench.sweeps import layers, list_sweeps, load, rows

    sweeps = list_sweeps(workdir)
    chosen = None
    if sweeps:
        ids = [SweepView.of(s).sweep_id for s in sweeps]
        chosen = load(workdir, sweep_id if sweep_id in ids else ids[0])  # type: ignore[arg-type]  # a listed sweep has its id
    chosen_rows = rows(chosen) if chosen else []
    layers.attach(chosen_rows)
    return token, sweeps, chosen, chosen_rows


class SweepsPanel(QWidget):
    """Shows the sweeps of ``workdir``; ``show_sweep`` selects one (a sweep that just ran). The chart is made on its
    first show or the first sweep to chart, whichever comes first (``plots``)."""

    lower: TurningSplitter  # type: ignore[assignment]  # shadows QWidget.lower(), never called on this panel
    # Made with the chart (``plots.make()``).
    legend: pg.LegendItem
    series: list[pg.PlotDataItem]
    marks: pg.ScatterPlotItem
    unsucceeded: pg.ScatterPlotItem
    empty_text: pg.TextItem

    message = Signal(str)  # for the status bar

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.workdir: str | None = None
        self.sweep: dict | None = None
        self.rows: list[dict] = []
        self._wanted: str | None = None
        self._worker: background.Task | None = None
        self._token = 0
        self.sweep_combo = QComboBox(objectName="sweep-choice")  # type: ignore[call-arg]  # a Qt property keyword
        self.sweep_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.sweep_combo.setMinimumContentsLength(30)
        self.refresh_button = QPushButton("Refresh")
        self.filter_edit = QLineEdit(placeholderText="Filter rows (text in any column)", objectName="sweep-filter")
        self.filter_edit.setClearButtonEnabled(True)
        self.diff_button = QPushButton("Diff two points", enabled=False)
        self.diff_button.setToolTip("Select two rows: their swept values, results and every spec field that differs.")
        self.summary = QLabel(objectName="sweep-summary")
        self.summary.setWordWrap(True)
        self.model = QStandardItemModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTableView(objectName="sweep-table")  # type: ignore[call-arg]  # a Qt property keyword
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # by point, as the sweep listed them
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.x_combo = QComboBox(objectName="sweep-x")  # type: ignore[call-arg]  # a Qt property keyword
        self.y_combo = QComboBox(objectName="sweep-y")  # type: ignore[call-arg]  # a Qt property keyword
        self.y_combo.addItems([*METRICS, *LAYER_METRICS])
        self.layer_combo = QComboBox(objectName="sweep-layer")  # type: ignore[call-arg]  # a Qt property keyword
        self.layer_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.layer_combo.setMinimumContentsLength(20)
        self.layer_combo.setToolTip("The module (of each point's model) whose time or error a layer measure shows")
        self.chart = DeferredPlotWidget()
        self.chart.setObjectName("sweep-chart")
        self.chart.setMinimumWidth(300)
        keep_readable(self.chart)
        self.plots = Deferred(self._make_chart, self.chart)
        self.diff = QTreeWidget(objectName="sweep-diff")  # type: ignore[call-arg]  # a Qt property keyword
        self.diff.setHeaderLabels(list(DIFF_HEADERS))
        self.diff.setRootIsDecorated(False)
        # Three columns in whatever width the pane has, each cut value elided with the whole in its tooltip.
        self.diff.header().setStretchLastSection(False)  # its own minimum would push past the pane's edge
        self.diff.header().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.diff.setMinimumWidth(40 * self.diff.fontMetrics().averageCharWidth())  # else it goes under the chart
        elide_with_tooltips(self.diff)
        elide_with_tooltips(self.table)
        self._layout()
        self.refresh_button.clicked.connect(self.rescan)
        self.sweep_combo.activated.connect(self._on_sweep_combo_activated)
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)
        self.filter_edit.textChanged.connect(self._draw_chart)
        self.x_combo.currentIndexChanged.connect(self._draw_chart)
        self.y_combo.currentIndexChanged.connect(self._draw_chart)
        self.layer_combo.currentIndexChanged.connect(self._draw_chart)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.diff_button.clicked.connect(self.diff_selected)

    def _make_chart(self) -> None:
        """The chart, drawing the sweep shown."""
        self.chart.set_plot(plot_item(axisItems={"bottom": IntegerAxis("bottom", whole=False)}))
        self.chart.showGrid(x=True, y=True, alpha=0.2)
        plain_axes(self.chart)
        self.legend = self.chart.addLegend(offset=(-8, 8), labelTextSize="8pt")
        self.series = []  # one per series, made again at each draw (a sweep has a few)
        self.marks = pg.ScatterPlotItem(size=18, pen=pg.mkPen(SELECTED_COLOUR, width=2), brush=None)
        self.unsucceeded = pg.ScatterPlotItem(size=14, symbol="x", pen=None, brush=pg.mkBrush(theme.BAD))
        for item in (self.marks, self.unsucceeded):
            item.setZValue(10)  # over the series drawn later
            self.chart.addItem(item)
        self.empty_text = pg.TextItem(anchor=(0.5, 0.5), color=theme.ORIGINAL)
        self.chart.addItem(self.empty_text, ignoreBounds=True)
        self._paint_chart()

    def _layout(self) -> None:
        chart_box = QWidget()
        chart_layout = QVBoxLayout(chart_box)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_layout.addWidget(
            flow_row(
                QLabel("Plot"), self.y_combo, QLabel("against"), self.x_combo, QLabel("at layer"), self.layer_combo
            )
        )
        chart_layout.addWidget(self.chart, 1)
        self.lower = TurningSplitter()  # the diff under the chart on a narrow window
        self.lower.addWidget(chart_box)
        self.lower.addWidget(self.diff)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.lower)
        self.splitter.setSizes([300, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(flow_row(QLabel("Sweep"), self.sweep_combo, self.refresh_button, self.diff_button))
        layout.addWidget(self.summary)
        layout.addWidget(self.filter_edit)
        layout.addWidget(scrolling(self.splitter), 1)  # the chart keeps its readable height

    # ---- loading ----

    def set_workdir(self, workdir: str | None) -> None:
        """Another workdir: the sweep of the one before leaves the table, the chart and the diff at once."""
        if workdir != self.workdir:
            self.workdir, self.sweep, self.rows, self._wanted = workdir, None, [], None
            self._token += 1  # a scan of the workdir before, still under way, is not shown
            self.sweep_combo.clear()
            self._fill_table()
            self.summary.setText(f"Reading the sweeps of {workdir}…")
            self._fill_axes()
            self._draw_chart()
            self._clear_diff()
        self.rescan()

    def rescan(self) -> None:
        if not self.workdir:
            return
        self._token += 1
        self._worker = background.start(
            _load,
            self._token,
            str(self.workdir),
            self._wanted or (SweepView.of(self.sweep).sweep_id if self.sweep is not None else None),
            returned=self._on_loaded,
        )

    def show_sweep(self, sweep_id: str) -> None:
        self._wanted = sweep_id
        self.rescan()

    def _on_sweep_combo_activated(self, index: int) -> None:
        self.show_sweep(self.sweep_combo.itemData(index))

    def _on_loaded(self, loaded: tuple[int, list[dict], dict | None, list[dict]]) -> None:
        token, sweeps, sweep, rows = loaded
        if token != self._token:
            return  # a later scan is on its way: an earlier one that ends last must not overwrite it
        self.sweep, self.rows = sweep, rows
        self._wanted = None
        self.sweep_combo.clear()
        for s in map(SweepView.of, sweeps):
            counts = ", ".join(f"{n} {k}" for k, n in s.counts.items() if n)
            self.sweep_combo.addItem(f"{s.sweep_id} · {s.name or ''} · {counts or s.state}", s.sweep_id)
        if self.sweep is not None:
            self.sweep_combo.setCurrentIndex(self.sweep_combo.findData(SweepView.of(self.sweep).sweep_id))
        self._fill_table()
        self._fill_axes()
        self._draw_chart()
        self._clear_diff()

    # ---- table and chart ----

    def _fill_table(self) -> None:
        from neffbench.sweeps.show import table_cells

        self.model.clear()
        if self.sweep is None:
            self.summary.setText(
                "No sweep in this workdir yet: start one with Compile ▸ Sweep… "
                "or `neffbench sweep SPEC --over FIELD=V1,V2`."
            )
            return
        head, body, keys = table_cells(self.sweep, self.rows)
        self.model.setHorizontalHeaderLabels(head)
        outcome_col = head.index("outcome")
        for cells, sort_keys, row in zip(body, keys, self.rows):
            items = []
            for col, (text, key) in enumerate(zip(cells, sort_keys)):
                item = QStandardItem(text)
                item.setData(key, SORT_ROLE)
                item.setData(row["point"], Qt.ItemDataRole.UserRole)
                if col == outcome_col:
                    item.setForeground(pg.mkColor(theme.JOB_OUTCOME_COLOURS.get(row["outcome"], theme.ORIGINAL)))
                items.append(item)
            self.model.appendRow(items)
        sweep = SweepView.of(self.sweep)
        counts = ", ".join(f"{n} {k}" for k, n in sweep.counts.items() if n)
        self.summary.setText(
            f"{sweep.name or sweep.sweep_id}: {len(self.rows)} points "
            f"({counts}) · {sweep.state} · {Path(sweep.path or '.').parent}"
        )

    def _fill_axes(self) -> None:
        self.x_combo.blockSignals(True)
        current = self.x_combo.currentData()
        self.x_combo.clear()
        sweep = SweepView.of(self.sweep or {})
        for name in sweep.fields:
            self.x_combo.addItem(sweep.short_names.get(name, name), name)
        for metric in (*METRICS, *LAYER_METRICS):
            self.x_combo.addItem(metric, METRIC_AXIS + metric)
        if current is not None and self.x_combo.findData(current) >= 0:
            self.x_combo.setCurrentIndex(self.x_combo.findData(current))
        self.x_combo.blockSignals(False)
        self._fill_layers()

    def _fill_layers(self) -> None:
        """The modules the points' models have, in call order; the one chosen before stays chosen."""
        from neffbench.sweeps import layers

        self.layer_combo.blockSignals(True)
        current = self.layer_combo.currentData()
        self.layer_combo.clear()
        for path in layers.paths(self.rows):
            self.layer_combo.addItem(layers.shown(path), path)
        if current is not None and self.layer_combo.findData(current) >= 0:
            self.layer_combo.setCurrentIndex(self.layer_combo.findData(current))
        self.layer_combo.blockSignals(False)

    def select_layer(self, path: str) -> None:
        """Show ``path``'s figures in the layer measures (a module path as `neffbench structure` shows it)."""
        self.layer_combo.setCurrentIndex(self.layer_combo.findData(path))

    def _measure(self, name: str) -> tuple[str, Callable[[dict], float | None]]:
        """A measure's axis title and how to read it from a row; a layer measure reads the chosen layer's figure."""
        if name in METRICS:
            return METRICS[name]
        from neffbench.sweeps import layers

        title, figure, scale = LAYER_METRICS[name]
        path = self.layer_combo.currentData()
        if path is None:
            return title, lambda _row: None

        def read(row: dict) -> float | None:
            value = layers.figure(row, path, figure)
            return None if value is None else value * scale

        return f"{layers.shown(path)}: {title}", read

    def shown_rows(self) -> list[dict]:
        """The rows the filter leaves, in the table's order."""
        by_point = {r["point"]: r for r in self.rows}
        return [by_point[self.proxy.index(i, 0).data(Qt.ItemDataRole.UserRole)] for i in range(self.proxy.rowCount())]

    def _words(self, measure: str) -> str:
        """A measure as the chart's title names it: a layer measure with its layer."""
        from neffbench.sweeps import layers

        path = self.layer_combo.currentData()
        return f"{measure} at {layers.shown(path)}" if measure in LAYER_METRICS and path is not None else measure

    def _charted(self) -> tuple[list[tuple[dict, float, float]], dict[float, str]]:
        """(row, x, y) per shown row with a value, and tick labels when the swept values are not numbers."""
        from neffbench.sweeps.show import swept_value

        field = self.x_combo.currentData()
        read = self._measure(self.y_combo.currentText())[1]
        if field is None or self.sweep is None:
            return [], {}
        if field.startswith(METRIC_AXIS):
            read_x = self._measure(field[len(METRIC_AXIS) :])[1]
            found = [(row, read_x(row), read(row)) for row in self.shown_rows()]
            found = [p for p in found if isinstance(p[1], (int, float))]
        else:
            found = [(row, swept_value(row, field), read(row)) for row in self.shown_rows()]
        found = [p for p in found if isinstance(p[2], (int, float))]
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for _, x, _ in found)
        ticks: dict[float, str] = {}
        if not numeric:
            order = list(dict.fromkeys(str(x) for _, x, _ in found))
            ticks = {float(i): text for i, text in enumerate(order)}
            found = [(row, float(order.index(str(x))), y) for row, x, y in found]
        return [(row, float(x), float(y)) for row, x, y in found], ticks  # type: ignore[arg-type]  # numbers (filtered above)

    def chart_points(self) -> tuple[list[float], list[float], list[str], dict[float, str]]:
        """x, y, outcome per shown row with a value, and tick labels when the swept values are not numbers."""
        charted, ticks = self._charted()
        return [x for _, x, _ in charted], [y for _, _, y in charted], [r["outcome"] for r, _, _ in charted], ticks

    def _series_name(self, row: dict) -> str:
        """The values of the swept fields not on the x axis: what the points of one series share."""
        from neffbench.sweeps.show import swept_value

        sweep = SweepView.of(self.sweep or {})
        others = [f for f in sweep.fields if f != self.x_combo.currentData()]
        return ", ".join(f"{sweep.short_names.get(f, f)} = {swept_value(row, f)}" for f in others) or "points"

    def _draw_chart(self) -> None:
        metric = self.y_combo.currentText()
        chosen = self.x_combo.currentData() or ""
        on_x = chosen[len(METRIC_AXIS) :] if chosen.startswith(METRIC_AXIS) else None
        self.layer_combo.setEnabled(metric in LAYER_METRICS or on_x in LAYER_METRICS)
        for combo in (self.x_combo, self.y_combo):
            combo.setEnabled(self.sweep is not None)
        if self.plots.made:
            self._paint_chart()
        elif self.sweep is not None:
            self.plots.make()  # drawn as it is made

    def _paint_chart(self) -> None:
        charted, ticks = self._charted()
        xs = [x for _, x, _ in charted]
        field = self.x_combo.currentText() or "swept value"
        metric = self.y_combo.currentText()
        chosen = self.x_combo.currentData() or ""
        on_x = chosen[len(METRIC_AXIS) :] if chosen.startswith(METRIC_AXIS) else None
        for item in self.series:
            self.chart.removeItem(item)
        self.series = []
        groups: dict[str, list[tuple[dict, float, float]]] = {}
        for point in sorted(charted, key=lambda p: p[1]):
            groups.setdefault(self._series_name(point[0]), []).append(point)
        several = len(groups) > 1
        for n, (name, points) in enumerate(groups.items()):
            colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
            curve = pg.PlotDataItem(
                [p[1] for p in points],
                [p[2] for p in points],
                # A line joins a series' points along a swept field; points placed by two measures stand alone.
                pen=pg.mkPen(colour, width=1.5) if several and not on_x else None,
                symbol="o",
                symbolSize=10,
                symbolPen=pg.mkPen(colour),
                symbolBrush=pg.mkBrush(colour),
                name=name if several else None,
            )
            self.chart.addItem(curve)
            self.series.append(curve)
        failed = [p for p in charted if p[0]["outcome"] != "succeeded"]
        self.unsucceeded.setData(
            [p[1] for p in failed],
            [p[2] for p in failed],
            brush=[pg.mkBrush(theme.JOB_OUTCOME_COLOURS.get(p[0]["outcome"], theme.ORIGINAL)) for p in failed],
            pen=None,
        )
        self.legend.removeItem(self.unsucceeded)
        if failed:
            self.legend.addItem(self.unsucceeded, "did not succeed")
        self._mark_selected(charted)
        empty = self._empty_words(metric) if not charted else ""
        self.empty_text.setText(empty)
        for side in ("left", "bottom"):
            self.chart.showAxis(side, self.sweep is not None)
        if self.sweep is None:  # nothing to chart: no axes, no title, only the words saying so
            set_title(self.chart.getPlotItem(), "")
            reset_axes(self.chart)
            self.empty_text.setPos(0.5, 0.5)
            return
        self.chart.setLabel("bottom", self._measure(on_x)[0] if on_x else field)
        self.chart.setLabel("left", self._measure(metric)[0])
        self.chart.getAxis("bottom").setTicks([sorted(ticks.items())] if ticks else None)
        # A swept count (tokens, an opt level) has whole-number ticks; a measure on the x axis need not.
        self.chart.getAxis("bottom").set_whole(not chosen.startswith(METRIC_AXIS) and all(x == int(x) for x in xs))
        missing = len(self.shown_rows()) - len(xs)
        set_title(
            self.chart.getPlotItem(),
            f"{self._words(metric)} against {self._words(on_x) if on_x else field}"
            + (f" · {missing} without a value" if missing else ""),
        )
        self.chart.enableAutoRange()
        if not xs:
            reset_axes(self.chart)
            self.empty_text.setPos(0.5, 0.5)

    def _empty_words(self, metric: str) -> str:
        if self.sweep is None:
            return "No sweep to chart: the points of a sweep appear here."
        if not self.shown_rows():
            return "No point is left by the filter."
        return f"No shown point has a figure of {self._words(metric)}."

    def _mark_selected(self, charted: list[tuple[dict, float, float]] | None = None) -> None:
        """A ring around the points of the rows selected in the table."""
        if not self.plots.made:
            return
        if charted is None:
            charted = self._charted()[0]
        chosen = {r["point"] for r in self.selected_points()}
        marked = [(x, y) for row, x, y in charted if row["point"] in chosen]
        self.marks.setData([x for x, _ in marked], [y for _, y in marked])
        self.legend.removeItem(self.marks)
        if marked:
            self.legend.addItem(self.marks, "selected in the table")

    # ---- diff ----

    def _clear_diff(self) -> None:
        self.diff.clear()
        self.diff.setHeaderLabels(list(DIFF_HEADERS))  # not the last two points' numbers

    def selected_points(self) -> list[dict]:
        by_point = {r["point"]: r for r in self.rows}
        points = {i.data(Qt.ItemDataRole.UserRole) for i in self.table.selectionModel().selectedRows()}
        return [by_point[p] for p in sorted(points) if p in by_point]

    def _on_table_selection_changed(self) -> None:
        self.diff_button.setEnabled(len(self.selected_points()) == 2)
        self._mark_selected()

    def diff_selected(self) -> None:
        from neffbench.sweeps.show import point_differences

        a, b = self.selected_points()
        assert self.sweep is not None  # its points are selected
        self.diff.clear()
        first, second = point_number(a["point"]), point_number(b["point"])
        self.diff.setHeaderLabels(["What", f"A: #{first}", f"B: #{second}"])
        for what, va, vb in point_differences(self.sweep, a, b):
            self.diff.addTopLevelItem(QTreeWidgetItem([what, va, vb]))
        if not self.diff.topLevelItemCount():
            self.diff.addTopLevelItem(QTreeWidgetItem(["Nothing differs", "", ""]))
        self.message.emit(f"Diffed point {first} with point {second}.")
