"""Original and rotated lanes of one head for one token, with the pairing and the pass-through tail shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt

from neffbench.gui.widgets import theme
from neffbench.gui.widgets.hover import PointerLabel, throttled_mouse_moves
from neffbench.gui.widgets.plot_boxes import plot_item
from neffbench.gui.widgets.plot_titles import set_title
from neffbench.gui.widgets.readable import integer_axes, keep_readable

if TYPE_CHECKING:  # the window must not wait for torch, which neffbench.kernels.rope.preview imports
    from neffbench.kernels.rope.preview import Preview


def pair_colours(preview: Preview) -> list:
    """One colour per lane: the two lanes of a pair share a colour, the tail is grey."""
    half = preview.rotary_dim // 2
    cmap = pg.colormap.get("CET-C6")
    lane_colour = [pg.mkBrush(theme.ORIGINAL)] * preview.head_size
    for k, (a, b) in enumerate(preview.pairing()):
        brush = pg.mkBrush(cmap.map(k / max(1, half), mode="qcolor"))
        lane_colour[a] = lane_colour[b] = brush
    return lane_colour


def key_head_for(preview: Preview, head: int) -> int:
    spec = preview.spec.model
    return head * spec.num_heads_k // spec.num_heads_q


class _LanePlot:
    """One tensor's plot: curves made once, data set per token and head."""

    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setLabel("bottom", "lane (element of the head)")
        plot.setLabel("left", "value (input's units)", **{"font-size": "8pt"})
        # One width for both plots: with x linked, lane k of the query then sits above lane k of the key.
        plot.getAxis("left").setWidth(56)
        self.original = plot.plot(
            pen=pg.mkPen(theme.ORIGINAL, width=1), symbol="o", symbolSize=4, symbolBrush=theme.ORIGINAL, symbolPen=None
        )
        self.rotated = plot.plot(pen=pg.mkPen(theme.ROTATED, width=1.5), symbol="o", symbolSize=6, symbolPen=None)
        self.tail = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(128, 128, 128, 40), pen=pg.mkPen(None))
        self.tail_label = pg.TextItem("pass-through", color=theme.ORIGINAL, anchor=(0, 0))
        plot.addItem(self.tail, ignoreBounds=True)
        plot.addItem(self.tail_label, ignoreBounds=True)
        pen = pg.mkPen(theme.BAD, width=1, style=Qt.PenStyle.DashLine)
        self.partners = [pg.InfiniteLine(angle=90, movable=False, pen=pen) for _ in range(2)]
        for line in self.partners:
            line.hide()
            plot.addItem(line, ignoreBounds=True)

    def set_data(self, title: str, before: np.ndarray, after: np.ndarray, preview: Preview, brushes: list) -> None:
        lanes = np.arange(preview.head_size)
        self.original.setData(lanes, before)
        self.rotated.setData(lanes, after, symbolBrush=brushes)
        set_title(self.plot, title)
        has_tail = preview.rotary_dim < preview.head_size
        self.tail.setVisible(has_tail)
        self.tail_label.setVisible(has_tail)
        if has_tail:
            self.tail.setRegion((preview.rotary_dim - 0.5, preview.head_size - 0.5))
            top = float(max(np.max(before), np.max(after)))
            self.tail_label.setPos(preview.rotary_dim - 0.4, top)
        self.plot.enableAutoRange()

    def show_partners(self, lanes: tuple[int, int] | None) -> None:
        for line, lane in zip(self.partners, lanes or (None, None)):
            line.setVisible(lane is not None)
            if lane is not None:
                line.setPos(lane)


class RotationPlots(pg.GraphicsLayoutWidget):
    """Query (top) and key (bottom); hovering a lane marks the lane it is rotated with."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._preview: Preview | None = None
        query, key = plot_item(axisItems=integer_axes("bottom")), plot_item(axisItems=integer_axes("bottom"))
        self.addItem(query, row=0, col=0)
        self.addItem(key, row=1, col=0)
        self.query, self.key = _LanePlot(query), _LanePlot(key)
        self.key.plot.setXLink(self.query.plot)
        self.pairing_label = self.addLabel("", row=2, col=0, justify="left")
        self.readout = self.addLabel("", row=3, col=0, justify="left", size="8pt")
        keep_readable(self, plots=2, lines=7)  # the pairing's two lines, the readout's row, the spacing
        self.token = 0
        self.head = 0
        # Throttled: a readout per repaint is plenty, however fast the mouse sends moves.
        self._hover = throttled_mouse_moves(self, self._on_scene_mouse_moved)
        self.pointer = PointerLabel(self.query.plot, self.key.plot)

    def set_preview(self, preview: Preview, token: int = 0, head: int = 0) -> None:
        self._preview = preview
        self._brushes = pair_colours(preview)
        half = preview.rotary_dim // 2
        if preview.is_neox_style:
            text = f"NeoX pairing: lane i rotates with lane i+{half} (split halves)"
        else:
            text = "GPT-J pairing: lane 2k rotates with lane 2k+1 (interleaved)"
        if preview.rotary_dim < preview.head_size:
            text += f" · lanes {preview.rotary_dim}..{preview.head_size - 1} pass through"
        text += f"<br><span style='color:{theme.ORIGINAL}'>grey: original</span> · colour: rotated, one colour per pair"
        self.pairing_label.setText(text)
        self.show_token(token, head)

    def show_token(self, token: int, head: int) -> None:
        preview = self._preview
        if preview is None:
            return
        rot = preview.rotation
        self.token = token = max(0, min(token, rot.num_tokens - 1))
        self.head = head = max(0, min(head, rot.query.shape[1] - 1))
        position = int(rot.positions[token])
        self.query.set_data(
            f"query · token {token} (position {position}) · head {head}",
            rot.query[token, head],
            rot.query_out[token, head],
            preview,
            self._brushes,
        )
        self.key.plot.setVisible(rot.key is not None)
        if rot.key is not None and rot.key_out is not None:  # made together
            kh = key_head_for(preview, head)
            self.key.set_data(
                f"key · token {token} · key head {kh}",
                rot.key[token, kh],
                rot.key_out[token, kh],
                preview,
                self._brushes,
            )
        self._show_default_readout()

    def lane_at(self, scene_pos: QPointF) -> tuple[str, int] | None:
        """("query" or "key", lane) under a scene position inside a plot's data area, or None."""
        if self._preview is None:
            return None
        for name, lane_plot in (("query", self.query), ("key", self.key)):
            vb = lane_plot.plot.vb
            if lane_plot.plot.isVisible() and vb.sceneBoundingRect().contains(scene_pos):
                lane = round(vb.mapSceneToView(scene_pos).x())
                return (name, lane) if 0 <= lane < self._preview.head_size else None
        return None

    def readout_text(self, tensor: str, lane: int) -> str:
        """The lane's and its partner's values before and after rotation, for the token and head shown."""
        assert self._preview is not None  # a lane is read from a preview drawn
        preview, rot = self._preview, self._preview.rotation
        head = self.head if tensor == "query" else key_head_for(preview, self.head)
        lanes, lanes_out = (rot.query, rot.query_out) if tensor == "query" else (rot.key, rot.key_out)
        assert lanes is not None and lanes_out is not None  # a key lane is read only where the keys are drawn
        before, after = lanes[self.token, head], lanes_out[self.token, head]
        where = f"{tensor} · token {self.token} · {'head' if tensor == 'query' else 'key head'} {head}"

        def values(k: int) -> str:
            return f"lane {k}: {before[k]:.5g} → {after[k]:.5g}"

        pair = next((i for i, p in enumerate(preview.pairing()) if lane in p), None)
        if pair is None:
            return f"{where} · lane {lane} passes through (not rotated)<br>{values(lane)}"
        a, b = preview.pairing()[pair]
        partner = b if lane == a else a
        return (
            f"{where} · lane {lane} rotates with partner lane {partner} (pair {pair})"
            f"<br>{values(lane)} · {values(partner)}  (before → after)"
        )

    def _lane_plot(self, tensor: str) -> _LanePlot:
        return self.query if tensor == "query" else self.key

    def pointer_text(self, tensor: str, lane: int) -> str:
        """What the label beside the pointer says: the lane's value before and after rotation."""
        assert self._preview is not None  # the pointer is over a lane only once a preview is drawn
        rot = self._preview.rotation
        head = self.head if tensor == "query" else key_head_for(self._preview, self.head)
        given, rotated = (rot.query, rot.query_out) if tensor == "query" else (rot.key, rot.key_out)
        assert given is not None and rotated is not None  # the key's plot is drawn only when there is a key
        before, after = given[self.token, head][lane], rotated[self.token, head][lane]
        return f"lane {lane}<br>{before:.4g} → {after:.4g}"

    def _show_default_readout(self) -> None:
        self.readout.setText("Hover a lane for its value and its partner's, before and after rotation")

    def _on_scene_mouse_moved(self, args: tuple) -> None:
        if self._preview is None:
            return
        hit = self.lane_at(args[0])
        partners = None
        if hit is not None:
            partners = next((p for p in self._preview.pairing() if hit[1] in p), None)
            self.readout.setText(self.readout_text(*hit))
            self.pointer.show(self._lane_plot(hit[0]).plot, args[0], self.pointer_text(*hit))
        else:
            self._show_default_readout()
            self.pointer.hide()
        for lane_plot in (self.query, self.key):
            lane_plot.show_partners(partners)
