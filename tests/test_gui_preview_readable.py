"""The preview reads without a manual: legends clear of the data, every band edge drawn, hover readouts,
badges that state their tolerance and reference, and presets that say what they are and where from."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMainWindow

from neffbench.gui.widgets import theme
from neffbench.kernels.tolerances import TOLERANCES
from neffbench.presets import load_preset

pytestmark = pytest.mark.gui

LLAMA31 = load_preset("llama3.1-8b")
# A yarn spec of modest size: llama3.1-8b's geometry, 32768 positions, factor 4 over 8192.
YARN = dataclasses.replace(
    LLAMA31,
    rope=dataclasses.replace(
        LLAMA31.rope,
        rope_type="yarn",
        factor=4.0,
        max_pos=32768,
        original_max_position_embeddings=8192,
        beta_fast=32.0,
        beta_slow=1.0,
    ),
)


def compute(spec):
    from neffbench.kernels.rope.preview import compute

    return compute(spec)


def hf_yarn_ramp(dim: int, base: float, original: int, beta_fast: float, beta_slow: float) -> tuple[int, int]:
    """Hugging Face's ``_compute_yarn_parameters``/``find_correction_range``, written out independently."""

    def correction_dim(rotations: float) -> float:
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    return max(math.floor(correction_dim(beta_fast)), 0), min(math.ceil(correction_dim(beta_slow)), dim - 1)


@pytest.fixture
def panel(qtbot):
    from neffbench.kernels.rope.gui.panel import RopePreviewPanel

    theme.configure_plots()
    widget = RopePreviewPanel()
    widget.resize(1400, 900)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def shown(panel, qtbot, spec):
    """Show the preview of ``spec`` and wait for the layout pass it asks for."""
    preview = compute(spec)
    panel.show_preview(preview)
    freq = panel.frequencies

    def legend_beside_the_plots():
        legend = freq.legend.sceneBoundingRect()
        for plot in (freq.wavelength_plot, freq.inv_freq_plot):
            assert not legend.intersects(plot.vb.sceneBoundingRect()), "the legend lies over a data area"

    qtbot.waitUntil(legend_beside_the_plots, timeout=10_000)
    return preview


def hover(qtbot, view, plot, x: float, y: float) -> None:
    """Move the mouse to (x, y) of ``plot`` once its view shows all of its data (autorange runs lazily)."""
    last = max(len(c.getData()[0]) for c in plot.listDataItems() if c.getData()[0] is not None) - 1
    qtbot.waitUntil(lambda: plot.vb.viewRange()[0][1] >= last, timeout=30_000)
    view.scene().sigMouseMoved.emit(plot.vb.mapViewToScene(QPointF(x, y)))


def _pen_key(pen) -> tuple[str, int]:
    return pen.color().name(), int(pen.style().value)


def _legend_entries(freq) -> dict[str, object]:
    return {label.text: sample.item for sample, label in freq.legend.items}


# ---- plain numbers (no Qt) ------------------------------------------------------------------------


def test_llama3_boundaries_are_the_kernels_band_edges():
    f = compute(LLAMA31).frequencies
    assert [(b.axis, b.value) for b in f.boundaries] == [("wavelength", 8192.0), ("wavelength", 2048.0)]
    for band, wavelength in zip(f.bands, f.base_wavelength, strict=True):
        expected = "interpolated" if wavelength > 8192 else "unchanged" if wavelength < 2048 else "blended"
        assert band == expected


def test_yarn_boundaries_are_the_ends_of_its_ramp():
    f = compute(YARN).frequencies
    low, high = hf_yarn_ramp(128, YARN.rope.base, 8192, 32.0, 1.0)
    assert [(b.axis, b.value) for b in f.boundaries] == [("pair", low), ("pair", high)]
    assert set(f.bands[: low + 1]) == {"unchanged"}
    assert set(f.bands[low + 1 : high]) == {"blended"}
    assert set(f.bands[high:]) == {"interpolated"}


def test_the_pair_check_states_its_tolerance():
    check = compute(LLAMA31).pair_check
    atol, rtol = TOLERANCES["bfloat16"]
    assert check.summary().startswith("PASS: preserved, max deviation")
    assert f"(tolerance {atol:g} + {rtol:g}*norm)" in check.summary()


# ---- frequency view -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [LLAMA31, YARN, load_preset("seed")], ids=["llama3", "yarn", "default"])
def test_every_curve_and_mark_has_a_legend_entry_and_the_legend_covers_no_data(panel, qtbot, spec):
    preview = shown(panel, qtbot, spec)
    freq = panel.frequencies
    entries = _legend_entries(freq)
    legend_pens = {
        _pen_key(pg.mkPen(item.opts["pen"])) for item in entries.values() if isinstance(item, pg.PlotDataItem)
    }
    legend_brushes = {
        pg.mkBrush(item.opts["brush"]).color().name()
        for item in entries.values()
        if isinstance(item, pg.ScatterPlotItem)
    }
    for plot in (freq.wavelength_plot, freq.inv_freq_plot):
        for item in plot.items:
            if not item.isVisible() or item in freq.cursors:
                continue
            if isinstance(item, pg.PlotDataItem) and item.opts["pen"] is not None and item.xData is not None:
                assert _pen_key(pg.mkPen(item.opts["pen"])) in legend_pens, "a curve without a legend entry"
            elif isinstance(item, pg.InfiniteLine):  # a mark
                assert _pen_key(item.pen) in legend_pens, "a mark without a legend entry"
    assert legend_brushes >= {theme.BAND_COLOURS[b] for b in preview.frequencies.bands}, "a band without an entry"
    # shown() waited for the legend to sit beside the data areas: no data point can be under it.
    legend = freq.legend.sceneBoundingRect()
    assert legend.width() > 100 and legend.height() > 15  # laid out (in columns: one row may hold every entry)
    for plot in (freq.wavelength_plot, freq.inv_freq_plot):
        for curve in plot.listDataItems():
            x, y = curve.getData()
            if x is None or not curve.isVisible():
                continue
            for px, py in zip(x, y, strict=True):
                assert not legend.contains(plot.vb.mapViewToScene(QPointF(px, py)))


def test_llama3_draws_both_wavelength_boundaries(panel, qtbot):
    shown(panel, qtbot, LLAMA31)
    freq = panel.frequencies
    drawn = sorted(10 ** line.value() for line in freq.edge_lines if line.isVisible())
    assert drawn == pytest.approx([8192 / 4.0, 8192 / 1.0])
    assert freq.original_line.isVisible() and 10 ** freq.original_line.value() == pytest.approx(8192)
    labels = list(_legend_entries(freq))
    assert "8192/low_freq_factor = 8192" in labels and "8192/high_freq_factor = 2048" in labels
    assert not any(line.isVisible() for lines in freq.pair_edge_lines for line in lines)


def test_yarn_draws_where_its_ramp_starts_and_ends(panel, qtbot):
    shown(panel, qtbot, YARN)
    freq = panel.frequencies
    low, high = hf_yarn_ramp(128, YARN.rope.base, 8192, 32.0, 1.0)
    for lines, pair in zip(freq.pair_edge_lines, (low, high), strict=True):
        assert all(line.isVisible() and line.value() == pytest.approx(pair) for line in lines)
    labels = list(_legend_entries(freq))
    assert f"beta_fast 32: ramp starts at pair {low}" in labels
    assert f"beta_slow 1: ramp ends at pair {high}" in labels
    assert not any(line.isVisible() for line in freq.edge_lines)


def test_hovering_a_pair_reads_out_its_index_wavelength_inv_freq_and_band(panel, qtbot):
    preview = shown(panel, qtbot, LLAMA31)
    freq, f = panel.frequencies, preview.frequencies
    pair = next(i for i, b in enumerate(f.bands) if b == "blended")
    hover(qtbot, freq, freq.wavelength_plot, pair, np.log10(f.wavelength[pair]))
    qtbot.waitUntil(lambda: f"pair {pair}:" in freq.readout.text, timeout=30_000)
    text = freq.readout.text
    assert "blended" in text
    assert f"wavelength {f.wavelength[pair]:.5g}" in text and f"inv_freq {f.inv_freq[pair]:.5g}" in text
    assert all(c.isVisible() and c.value() == pair for c in freq.cursors)
    # Off the data area the readout goes back to its hint.
    freq.scene().sigMouseMoved.emit(QPointF(1, 1))
    qtbot.waitUntil(lambda: freq.readout.text.startswith("Hover"), timeout=30_000)


# ---- rotated lanes --------------------------------------------------------------------------------


def test_hovering_a_lane_shows_it_and_its_neox_partner_before_and_after(panel, qtbot):
    preview = shown(panel, qtbot, load_preset("seed"))
    rot_view, rot = panel.rotation, preview.rotation
    lane, partner = 5, 5 + preview.rotary_dim // 2
    hover(qtbot, rot_view, rot_view.query.plot, lane, 0)
    qtbot.waitUntil(lambda: "partner lane" in rot_view.readout.text, timeout=30_000)
    text = rot_view.readout.text
    assert f"lane {lane} rotates with partner lane {partner} (pair {lane})" in text
    for k in (lane, partner):
        assert f"lane {k}: {rot.query[0, 0, k]:.5g} → {rot.query_out[0, 0, k]:.5g}" in text
    assert all(line.isVisible() for line in rot_view.query.partners)
    # The key plot reads the key head the query head shares.
    hover(qtbot, rot_view, rot_view.key.plot, partner, 0)
    qtbot.waitUntil(lambda: rot_view.readout.text.startswith("key"), timeout=30_000)
    assert f"lane {lane}: {rot.key[0, 0, lane]:.5g} → {rot.key_out[0, 0, lane]:.5g}" in rot_view.readout.text


def test_gptj_lanes_pair_with_their_neighbour_and_the_tail_passes_through(panel, qtbot):
    spec = load_preset("gpt-j-6b")
    spec = dataclasses.replace(spec, inputs=dataclasses.replace(spec.inputs, num_tokens=(2,)))
    preview = shown(panel, qtbot, spec)
    rot_view, rot = panel.rotation, preview.rotation
    hover(qtbot, rot_view, rot_view.query.plot, 7, 0)
    qtbot.waitUntil(lambda: "partner lane 6 (pair 3)" in rot_view.readout.text, timeout=30_000)
    assert f"lane 6: {rot.query[0, 0, 6]:.5g} → {rot.query_out[0, 0, 6]:.5g}" in rot_view.readout.text
    hover(qtbot, rot_view, rot_view.query.plot, 100, 0)
    qtbot.waitUntil(lambda: "passes through" in rot_view.readout.text, timeout=30_000)
    assert f"lane 100: {rot.query[0, 0, 100]:.5g} → {rot.query_out[0, 0, 100]:.5g}" in rot_view.readout.text


# ---- badges ---------------------------------------------------------------------------------------


def test_the_badge_states_its_tolerance_and_the_cast_error_its_reference(panel, qtbot):
    preview = shown(
        panel,
        qtbot,
        dataclasses.replace(LLAMA31, rope=dataclasses.replace(LLAMA31.rope, cache_dtype="bfloat16", max_pos=8192)),
    )
    badge = panel.pair_badge.text()
    atol, rtol = TOLERANCES["bfloat16"]
    assert badge.startswith("Pair norms PASS: preserved") and f"tolerance {atol:g} + {rtol:g}*norm" in badge
    assert "Largest deviation:" in panel.pair_badge.toolTip()
    cast = panel.cast_label.text()
    assert f"bfloat16: max error {preview.cast_error:.3g} vs the float32 table" in cast
    pos, col = preview.cast_error_at
    assert f"position {pos}, " in cast and ("cos pair" in cast or "sin pair" in cast)


# ---- presets menu ---------------------------------------------------------------------------------


def test_preset_entries_name_the_model_its_figures_and_source(qtbot):
    from neffbench.gui.shell.actions import build_actions

    window = QMainWindow()
    qtbot.addWidget(window)
    build_actions(window)
    llama = window.preset_actions["llama3.1-8b"]
    assert llama.iconText() == "Meta Llama 3.1 8B — 131072 positions, 32/8 heads, llama3 scaling (factor 8)"
    assert "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json" in llama.statusTip()
    assert "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json" in llama.toolTip()
    assert window.preset_actions["qwen2-7b"].iconText() == "Qwen2 7B — 131072 positions, 28/4 heads, no scaling"
    rms_norm = window.preset_actions["llama3-8b-rms-norm"]
    assert rms_norm.iconText() == "Meta Llama 3 8B RMSNorm — hidden 4096, eps 1e-5, bfloat16"
    assert "vLLM's RoPE forward" in window.preset_actions["seed"].statusTip()
    assert all(len(a.iconText()) <= 80 and a.statusTip() for a in window.preset_actions.values())
    assert window.presets_menu.toolTipsVisible()
    assert llama in window.presets_menu.actions()


def test_every_axis_says_its_unit_and_every_plot_its_x(panel, qtbot):
    shown(panel, qtbot, LLAMA31)
    freq, rotation, tables = panel.frequencies, panel.rotation, panel.tables
    assert freq.wavelength_plot.getAxis("left").labelText == "wavelength (positions)"
    assert freq.inv_freq_plot.getAxis("left").labelText == "inv_freq (rad/position)"
    plots = [freq.wavelength_plot, freq.inv_freq_plot, rotation.query.plot, rotation.key.plot, tables.cos_plot]
    for plot in plots:
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            assert axis.isVisible() and axis.labelText, f"{plot.titleLabel.text or side}: no {side} label"


def test_the_frequency_plots_have_the_width_the_legend_took(panel, qtbot):
    shown(panel, qtbot, LLAMA31)
    freq = panel.frequencies
    # The legend sits above the plots, not beside them: each plot spans (nearly) the view's width.
    legend = freq.legend.sceneBoundingRect()
    for plot in (freq.wavelength_plot, freq.inv_freq_plot):
        assert legend.bottom() <= plot.sceneBoundingRect().top()
        assert plot.sceneBoundingRect().width() >= 0.9 * freq.width()
        assert plot.getAxis("bottom").labelText == "pair index"


def test_the_hovered_value_is_written_beside_the_pointer(panel, qtbot):
    preview = shown(panel, qtbot, LLAMA31)
    freq, f = panel.frequencies, preview.frequencies
    pair = 20
    y = np.log10(f.inv_freq[pair])
    hover(qtbot, freq, freq.inv_freq_plot, pair, y)
    qtbot.waitUntil(lambda: freq.pointer.shown() is not None, timeout=30_000)
    label = freq.pointer.shown()
    assert label is freq.pointer.labels[freq.inv_freq_plot]
    assert f"inv_freq {f.inv_freq[pair]:.4g} rad/position" in label.textItem.toPlainText()
    assert (label.pos().x(), label.pos().y()) == pytest.approx((pair, y), abs=0.05)
    rotation = panel.rotation
    lane = 5
    hover(qtbot, rotation, rotation.key.plot, lane, 0.0)
    qtbot.waitUntil(lambda: rotation.pointer.shown() is not None, timeout=30_000)
    assert rotation.pointer.shown().textItem.toPlainText().startswith(f"lane {lane}")
    rotation.scene().sigMouseMoved.emit(QPointF(1, 1))  # off the plots: the label goes
    qtbot.waitUntil(lambda: rotation.pointer.shown() is None, timeout=30_000)
