"""The Preview tab: computed off the GUI thread as the form changes, debounced, and readable at 131072 positions."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import QPointF

from neffbench.kernels.rope.gui.tables import MAX_DRAWN_POSITIONS

pytestmark = pytest.mark.gui


@pytest.fixture
def ready(window, qtbot):
    """The window with torch loaded and a first preview shown."""
    with qtbot.waitSignal(window.preview_controller.computed, timeout=60_000):
        window.preview_controller.load_torch()
    return window


def test_preview_fills_in_once_torch_has_loaded(ready):
    panel = ready.preview_panel
    assert panel.preview is not None and panel.preview.spec.name == "seed"
    assert panel.pair_badge.text().startswith("Pair norms PASS")
    assert "nothing lost" in panel.cast_label.text()
    assert panel.rotation.pairing_label.text.startswith("NeoX pairing")


def test_edits_are_debounced_and_only_the_newest_is_shown(ready, qtbot):
    computed = []
    ready.preview_controller.computed.connect(computed.append)
    spin = ready.form.editor("rope.max_pos").widget
    for value in (200, 300, 400, 500):
        spin.setValue(value)
    qtbot.waitUntil(
        lambda: bool(computed) and computed[-1].max_pos == 500 and not ready.preview_controller.is_busy, timeout=30_000
    )
    assert len(computed) <= 2
    assert ready.preview_panel.preview.max_pos == 500


def test_a_long_table_is_drawn_downsampled_and_read_in_full(ready, qtbot):
    with qtbot.waitSignal(ready.preview_controller.computed, timeout=60_000):
        ready.apply_preset("llama3.1-8b")
    panel = ready.preview_panel
    tables = panel.tables
    assert panel.preview.max_pos == 131072
    assert tables.cos_image.image.shape[1] <= MAX_DRAWN_POSITIONS + 1
    assert "1 in" in tables.readout.text
    # Zoomed in, every position is drawn.
    tables.cos_plot.vb.setXRange(1000, 1400, padding=0)
    assert tables.drawn_step == 1
    # The readout under the cursor comes from the full table.
    scene_pos = tables.cos_plot.vb.mapViewToScene(QPointF(1234.5, 10.5))
    tables._on_scene_mouse_moved(scene_pos)
    value, _ = panel.preview.value(1234, 10)
    assert "position 1234 · pair 10" in tables.readout.text and f"{value:.7g}" in tables.readout.text
    assert "interpolated" in panel.frequencies.summary.text
    assert panel.frequencies.original_line.isVisible()


def test_cast_precision_and_pairing_follow_the_form(ready, qtbot):
    with qtbot.waitSignal(ready.preview_controller.computed, timeout=30_000):
        ready.form.editor("rope.cache_dtype").widget.setCurrentText("bfloat16")
    assert "bfloat16: max error" in ready.preview_panel.cast_label.text()
    with qtbot.waitSignal(ready.preview_controller.computed, timeout=30_000):
        ready.form.editor("model.is_neox_style").widget.setChecked(False)
    assert ready.preview_panel.rotation.pairing_label.text.startswith("GPT-J pairing")


def test_token_and_head_choose_the_lanes_shown(ready, qtbot):
    with qtbot.waitSignal(ready.preview_controller.computed, timeout=30_000):
        ready.form.editor("inputs.num_tokens").widget.setText("4")
        ready.form.editor("inputs.num_tokens").edited.emit()
    panel = ready.preview_panel
    panel.token_spin.setValue(3)
    panel.head_spin.setValue(5)
    rot = panel.preview.rotation
    x, y = panel.rotation.query.rotated.getData()
    assert list(y) == pytest.approx(list(rot.query_out[3, 5]))
    assert "key head 1" in panel.rotation.key.plot.titleLabel.text


def test_a_spec_with_errors_says_why_there_is_no_preview(ready, qtbot):
    with qtbot.waitSignal(ready.preview_controller.failed, timeout=30_000):
        ready.form.editor("model.rotary_dim").widget.setValue(63)
    assert "No preview" in ready.preview_panel.status_label.text()
    assert "last valid spec" in ready.preview_panel.status_label.text()
    # No badge may vouch for plots of another spec.
    assert ready.preview_panel.pair_badge.text() == "Pair norms: not checked"


def test_the_window_module_does_not_import_torch():
    code = "import sys, neffbench.gui.shell.main_window, neffbench.gui.shell.launch\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
