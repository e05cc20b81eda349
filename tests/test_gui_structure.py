"""The Structure tab: the tree with each layer's error and time, search, the data flow drawn for the module picked
(clicking a box picks that module), the first divergent layer marked, a job without a structure, and the link to
the Numerics tab in the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.cli import neffbench
from tests.test_compare import _project
from tests.test_structure_core import LLAMA

pytestmark = pytest.mark.gui
LOAD_TIMEOUT_MS = 30_000


def _tap(name: str, module: str, ok: bool, times: float) -> dict:
    figures = {"ok": ok, "times_tolerance": times, "max_abs": times * 1e-5, "cosine": 1.0, "dtype": "float32"}
    return {"name": name, "module": module, "class": "", "dtype": "float32", "shape": [1, 8, 32],
            "vs_eager": {**figures, "ok": True, "times_tolerance": 0.0}, "vs_float64": figures}  # fmt: skip


@pytest.fixture
def job(tmp_path) -> Path:
    """A job directory with a structure, a compare whose first divergent layer is model.layers.1.mlp, and a
    profile giving each layer its time: written here, as the compile, compare and run --profile keep them."""
    job = tmp_path / "wd" / "llama-20260101T000000Z-0"
    (job / "compares").mkdir(parents=True)
    (job / "runs" / "r").mkdir(parents=True)
    record = {"schema_version": 1, "job_id": job.name, "outcome": "succeeded", "backend": "neuron", "kernel": "module",
              "spec": {"compiler": {"target": "trn2", "lnc": 2}}}  # fmt: skip
    (job / "job.json").write_text(json.dumps(record))
    nodes = [{**n, "params": 10, "flops": 1000 if n["calls"] else 0} for n in LLAMA["nodes"]]
    (job / "structure.json").write_text(json.dumps({**LLAMA, "nodes": nodes}))
    taps = [
        _tap("tap0", "model.layers.0", True, 0.1),
        _tap("tap1", "model.layers.1.mlp", False, 40.0),
        _tap("tap2", "model.layers.1", False, 50.0),
    ]
    compare = {"job": job.name, "taps": taps, "first_divergent": {"vs_eager": None, "vs_float64": "tap1"},
               "verdict": "divergent", "runtime": "nrtpy", "created": "2026-01-01T00:00:00.000Z"}  # fmt: skip
    (job / "compares" / "20260101T000000.000000Z-nrtpy.json").write_text(json.dumps(compare))
    framework = [
        {"name": "NeuronLlamaDecoderLayer[0]/aten.add", "intervals": [[0, 100]]},
        {"name": "NeuronLlamaDecoderLayer[1]/LlamaMLP[mlp]/aten.linear", "intervals": [[100, 400]]},
    ]
    processed = {"tool": "neuron-explorer", "tool_version": "neuron-explorer 2.33", "source": "parquet",
                 "neff": "/nowhere/graph.neff", "summary": {"total_time": 5e-7}, "framework": framework}  # fmt: skip
    (job / "runs" / "r" / "profile.json").write_text(json.dumps(processed))
    run = {"schema_version": 1, "profile": {"captured": True, "processed": str(job / "runs" / "r" / "profile.json")}}
    (job / "runs" / "20260101T000001.000000Z-nrtpy.json").write_text(json.dumps(run))
    return job


@pytest.fixture
def panel(qtbot):
    from neffbench.gui.structure.panel import StructurePanel
    from neffbench.gui.widgets import background

    panel = StructurePanel()
    qtbot.addWidget(panel)
    panel.resize(1024, 700)
    panel.show()
    yield panel
    qtbot.waitUntil(lambda: background.running() == 0, timeout=LOAD_TIMEOUT_MS)


def _show(panel, qtbot, job: Path) -> None:
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):  # the tree shown, the root's flow drawn
        panel.set_job(str(job))


def _row(panel, path: str):
    return panel.model.index_of(path)


def _cell(panel, path: str, heading: str) -> str:
    column = [c.heading for c in panel.model.columns].index(heading)
    return panel.model.index_of(path, column).data()


def test_the_tree_shows_each_layers_error_and_time_and_marks_the_first_divergent(panel, qtbot, job):
    from neffbench.gui.structure.model import FIRST_DIVERGENT

    _show(panel, qtbot, job)
    assert "LlamaForCausalLM, 11 submodules" in panel.job_label.text()
    headings = [c.heading for c in panel.model.columns]
    assert {"time", "share", "vs eager", "vs float64"} <= set(headings)
    assert _cell(panel, "model.layers.1.mlp", "time") == "0.3 µs"
    assert _cell(panel, "model.layers.1.mlp", "share") == "60.0%" and _cell(panel, "model.layers.0", "share") == "20.0%"
    assert _cell(panel, "model.layers.1.mlp", "vs float64") == "FAIL 40x ◀ first"
    marked = panel.model.index_of("model.layers.1.mlp").data(Qt.ItemDataRole.BackgroundRole)
    assert marked.color() == FIRST_DIVERGENT
    assert panel.model.index_of("model.layers.1").data(Qt.ItemDataRole.BackgroundRole) is None
    # Two levels open: the model's layers in view without a click, the layers' own children not.
    assert panel.tree.isExpanded(_row(panel, "model")) and not panel.tree.isExpanded(_row(panel, "model.layers.0"))
    assert "first divergent against float64: model.layers.1.mlp" in panel.sources_label.text()


def test_picking_a_module_draws_its_childrens_data_flow_and_a_box_picks_its_module(panel, qtbot, job):
    from neffbench.gui.widgets import theme

    _show(panel, qtbot, job)
    picked = []
    panel.node_selected.connect(picked.append)
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS) as drawn:
        panel.tree.setCurrentIndex(_row(panel, "model.layers.1"))
    assert drawn.args == ["model.layers.1"] and picked == ["model.layers.1"]
    boxes = panel.flow_view.boxes
    assert set(boxes) == {"model.layers.1.self_attn", "model.layers.1.mlp"}
    assert boxes["model.layers.1.mlp"].pen().color().name() == theme.BAD  # the first divergent, outlined
    assert "model.layers.1" in panel.detail.text() and "first divergent" not in panel.detail.text()
    # Clicking the MLP's box picks the MLP: its row, its flow.
    view = panel.flow_view
    centre = view.mapFromScene(boxes["model.layers.1.mlp"].sceneBoundingRect().center())
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS) as drawn:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert drawn.args == ["model.layers.1.mlp"] and panel.selected_path() == "model.layers.1.mlp"
    assert "first divergent" in panel.detail.text()


def test_search_keeps_the_matches_and_the_rows_above_them(panel, qtbot, job):
    _show(panel, qtbot, job)
    panel.search.setText("MLP")
    shown = []

    def walk(parent):
        for row in range(panel.model.rowCount(parent)):
            index = panel.model.index(row, 0, parent)
            if not panel.tree.isRowHidden(row, parent):
                shown.append(panel.model.path_of(index))
                walk(index)

    from PySide6.QtCore import QModelIndex

    walk(QModelIndex())  # the rows not hidden
    assert shown == [
        "",
        "model",
        "model.layers",
        "model.layers.0",
        "model.layers.0.mlp",
        "model.layers.1",
        "model.layers.1.mlp",
    ]
    assert panel.tree.isExpanded(_row(panel, "model.layers.1"))
    panel.search.clear()
    assert not any(panel.tree.isRowHidden(r, _row(panel, "model")) for r in range(3))  # embed_tokens, layers, norm


def test_a_job_without_a_structure_says_how_to_get_one(panel, qtbot, job):
    (job / "structure.json").unlink()
    with qtbot.waitSignal(panel.shown, timeout=LOAD_TIMEOUT_MS) as shown:
        panel.set_job(str(job))
    assert shown.args == [None] and panel.compute_button.isVisible() and panel.compute_button.isEnabled()
    assert "Compute structure builds its module again" in panel.sources_label.text()
    assert f"neffbench structure {job}" in panel.sources_label.text()


def test_another_job_beside_it_says_what_differs(panel, qtbot, job, tmp_path):
    import shutil

    other = tmp_path / "other"
    shutil.copytree(job, other)
    doc = json.loads((other / "structure.json").read_text())
    doc["nodes"] = [
        {**n, "class": "LlamaSdpaAttention"} if n["path"] == "model.layers.0.self_attn" else n for n in doc["nodes"]
    ]
    (other / "structure.json").write_text(json.dumps(doc))
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):
        panel.set_job(str(job), other=str(other))
    assert _cell(panel, "model.layers.0.self_attn", "what differs") == "class LlamaAttention → LlamaSdpaAttention"
    assert (
        _cell(panel, "model.layers.1", "what differs") == "" and _cell(panel, "model.layers.1.mlp", "Δ time") == "+0.0%"
    )


@pytest.mark.slow
def test_a_tap_picked_in_the_numerics_tab_picks_its_module_here_and_the_reverse(make_window, qtbot, tmp_path, compiled):
    from neffbench.gui.shell.tabs import STRUCTURE_TAB

    job = _project(compiled, tmp_path, "cpu-check")
    proc = neffbench("compare", str(job), "--runtime", "cpu", "--depth", "1", cwd=job.parent.parent)
    assert proc.returncode == 3, proc.stderr
    window = make_window(workdir=job.parent)
    with qtbot.waitSignal(window.panels.structure.drawn, timeout=LOAD_TIMEOUT_MS):  # it follows the job compared
        with qtbot.waitSignal(window.panels.numerics.scanned, timeout=LOAD_TIMEOUT_MS):
            window.panels.numerics.set_job(str(job))
    assert window.panels.structure.job_dir == str(job)
    taps = [t["module"] for t in window.panels.numerics.document["taps"]]
    with qtbot.waitSignal(window.panels.structure.drawn, timeout=LOAD_TIMEOUT_MS):
        window.panels.numerics.table.selectRow(taps.index("layers.2"))
    assert window.panels.structure.selected_path() == "layers.2"
    window.tabs.setCurrentIndex(STRUCTURE_TAB)
    window.panels.structure.select_path("layers.3", quiet=False)
    assert window.panels.numerics.table.selected_index() == taps.index("layers.3")


def test_a_figures_column_sorts_each_modules_children_largest_first(panel, qtbot, job):
    _show(panel, qtbot, job)
    column = [c.heading for c in panel.model.columns].index("time")

    def layers() -> list[str]:  # found again after each sort: a sort moves rows, and with them their indexes
        parent = _row(panel, "model.layers")
        return [panel.model.path_of(panel.model.index(r, 0, parent)) for r in range(2)]

    panel.tree.header().sectionClicked.emit(column)
    assert layers() == ["model.layers.1", "model.layers.0"]  # 300 ns before 100 ns
    model = [panel.model.path_of(panel.model.index(r, 0, _row(panel, "model"))) for r in range(3)]
    assert model == ["model.layers", "model.embed_tokens", "model.norm"]  # the layers' 400 ns first, untimed last
    panel.tree.header().sectionClicked.emit(0)  # the module column: the call order again
    assert layers() == ["model.layers.0", "model.layers.1"]


def test_a_run_of_alike_layers_is_one_box_coloured_by_its_worst_and_a_click_draws_each(panel, qtbot, tmp_path):
    from neffbench.gui.structure.drawing import error_fill
    from tests.test_structure_core import deep_document

    job = tmp_path / "deep-20260101T000000Z-0"
    (job / "compares").mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"schema_version": 1, "job_id": job.name, "outcome": "succeeded"}))
    (job / "structure.json").write_text(json.dumps(deep_document(6)))
    taps = [_tap("tap0", "model.layers.0", True, 0.5), _tap("tap4", "model.layers.4", False, 300.0)]
    compare = {"job": job.name, "taps": taps, "first_divergent": {"vs_eager": None, "vs_float64": "tap4"},
               "verdict": "divergent", "runtime": "nrtpy", "created": "2026-01-01T00:00:00.000Z"}  # fmt: skip
    (job / "compares" / "20260101T000000.000000Z-nrtpy.json").write_text(json.dumps(compare))
    _show(panel, qtbot, job)
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):
        panel.select_path("model", quiet=False)
    boxes = panel.flow_view.boxes
    assert set(boxes) == {"model.embed_tokens", "model.layers.0", "model.norm"}
    run = boxes["model.layers.0"]
    assert run.run and "6 × NeuronLlamaDecoderLayer" in run.toolTip() and "model.layers.4" in run.toolTip()
    assert run.brush().color() == error_fill(300.0)  # the worst of the run, not its first layer's
    assert run.pen().color().name() == "#b00020" or run.pen().width() == 3  # holds the first divergent
    centre = panel.flow_view.mapFromScene(run.sceneBoundingRect().center())
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS) as drawn:
        qtbot.mouseClick(panel.flow_view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert drawn.args == ["model"] and panel.selected_path() == "model"
    assert {f"model.layers.{k}" for k in range(6)} <= set(panel.flow_view.boxes)
    assert not panel.flow_view.boxes["model.layers.0"].run


def test_the_tree_is_qts_own_item_model_filled_in_parts_with_every_cells_value(panel, qtbot, tmp_path):
    from PySide6.QtGui import QStandardItemModel

    from neffbench.gui.structure.model import ROWS_PER_TURN
    from tests.test_structure_core import deep_document

    job = tmp_path / "deep-20260101T000000Z-0"
    job.mkdir()
    (job / "job.json").write_text(json.dumps({"schema_version": 1, "job_id": job.name, "outcome": "succeeded"}))
    document = deep_document(40)
    (job / "structure.json").write_text(json.dumps(document))
    assert len(document["nodes"]) > ROWS_PER_TURN
    with qtbot.waitSignal(panel.model.filled, timeout=LOAD_TIMEOUT_MS):
        with qtbot.waitSignal(panel.shown, timeout=LOAD_TIMEOUT_MS):
            panel.set_job(str(job))
        assert not panel.model.complete  # the first levels shown at once, the rest on later turns
    assert isinstance(panel.model, QStandardItemModel)
    assert panel.tree.isExpanded(_row(panel, "model"))
    layers = _row(panel, "model.layers")
    assert [panel.model.path_of(panel.model.index(r, 0, layers)) for r in (0, 39)] == [
        "model.layers.0",
        "model.layers.39",
    ]
    assert _cell(panel, "model.layers.39.mlp", "class") == "LlamaMLP"
    assert _cell(panel, "model.layers.39.mlp", "module") == "mlp"
    tip = panel.model.index_of("model.layers.39.mlp").data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("model.layers.39.mlp (LlamaMLP)")
    assert panel.model.rowCount(_row(panel, "model.layers.39")) == 1
    panel.search.setText("layers.39.ml")
    assert not panel.tree.isRowHidden(39, layers) and panel.tree.isRowHidden(0, layers)
    assert panel.tree.isExpanded(_row(panel, "model.layers.39"))


def test_a_level_drawn_before_is_drawn_again_without_laying_it_out_again(panel, qtbot, job, monkeypatch):
    from neffbench.gui.structure.drawing import time_fill
    from neffbench.structure import layout_child

    laid_out = []
    lay_out = layout_child.lay_out
    monkeypatch.setattr(layout_child, "lay_out", lambda found: laid_out.append(found.path) or lay_out(found))
    _show(panel, qtbot, job)
    for path in ("model.layers.1", "model", "model.layers.1", "", "model"):
        with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS) as drawn:
            panel.select_path(path, quiet=False)
        assert drawn.args == [path]
    assert laid_out == ["", "model.layers.1", "model"]
    assert set(panel.flow_view.boxes) == {"model.embed_tokens", "model.layers.0", "model.layers.1", "model.norm"}
    # Another colour: the same layout drawn in it.
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):
        panel.colour_combo.setCurrentIndex(1)
    assert laid_out == ["", "model.layers.1", "model"]
    assert panel.flow_view.boxes["model.layers.1"].brush().color() == time_fill(0.6)
    # The job read again (a new compare, a structure computed since): laid out again.
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):
        panel.reload()
    assert laid_out == ["", "model.layers.1", "model", ""]


def test_a_drawing_is_laid_out_in_a_child_process_not_the_windows(panel, qtbot, tmp_path, monkeypatch):
    from neffbench.structure import layout
    from tests.test_structure_core import deep_document

    def nothing_here(_sized):
        raise AssertionError("laid out in the window's process")

    monkeypatch.setattr(layout, "arrange", nothing_here)
    job = tmp_path / "deep-20260101T000000Z-0"
    job.mkdir()
    (job / "job.json").write_text(json.dumps({"schema_version": 1, "job_id": job.name, "outcome": "succeeded"}))
    (job / "structure.json").write_text(json.dumps(deep_document(32)))
    _show(panel, qtbot, job)
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):
        panel.select_path("model", quiet=False)
    with qtbot.waitSignal(panel.drawn, timeout=LOAD_TIMEOUT_MS):
        panel.flow_view.run_clicked.emit("model.layers.0")
    assert {f"model.layers.{k}" for k in range(32)} <= set(panel.flow_view.boxes)
