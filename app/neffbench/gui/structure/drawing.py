"""The data flow between a module's children, drawn from its layout: boxes coloured by error or by device time,
the first divergent layer outlined, edges as arrows. Clicking a module's box asks for that module; clicking a run
of alike layers (drawn stacked, coloured by its worst) asks for it to be drawn whole."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen, QPolygonF, QWheelEvent
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

from neffbench.gui.widgets import theme
from neffbench.structure import cells, layout
from neffbench.structure.flow import Flow
from neffbench.structure.layers import Laid, Layer

FILLS = {"module": "#e8f0fe", "op": "#f1f3f4", "input": "#e6f4ea", "output": "#fce8e6"}
EDGE = QColor("#5f6368")
COLOUR_BY = ("error", "time")
READABLE_SCALE = 0.6  # below it a box's label is too small to read: the drawing scrolls (drag it) instead


def error_fill(worst: float | None) -> QColor | None:
    """Reds for a layer over tolerance, deeper the further (1x to 1000x and beyond)."""
    if worst is None or worst <= 1:
        return None
    strength = 1.0 if math.isinf(worst) else min(1.0, math.log10(worst) / 3)
    g = int(225 - 130 * strength)
    return QColor(255, g, g)


def time_fill(share: float | None) -> QColor | None:
    """Oranges by the layer's share of the NEFF's time."""
    if share is None or share <= 0:
        return None
    strength = min(1.0, share * 2)
    return QColor(255, int(243 - 110 * strength), int(224 - 190 * strength))


class _Box(QGraphicsPathItem):
    def __init__(self, rect: QRectF, path: str | None, kind: str, run: bool = False) -> None:
        shape = QPainterPath()
        shape.setFillRule(Qt.FillRule.WindingFill)  # the cards behind filled, not cut out where they overlap
        if run:  # a run: the edges of the boxes behind it show, as a stack of cards
            for step in (6, 3):
                shape.addRoundedRect(rect.translated(step, -step), 5, 5)
        shape.addRoundedRect(rect, 5, 5)
        super().__init__(shape)
        self.module_path = path if kind == "module" else None
        self.run = run
        if self.module_path is not None:
            self.setCursor(Qt.CursorShape.PointingHandCursor)


class FlowView(QGraphicsView):
    """``module_clicked(path)`` when a module's box is clicked, ``run_clicked(first path)`` when a run's is.
    ``show_flow`` draws; the layout comes laid."""

    module_clicked = Signal(str)
    run_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("structure-flow")
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setMinimumSize(220, 160)
        self.setAlignment(
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
        )  # a short drawing starts at the top
        self.boxes: dict[str, _Box] = {}
        self.colour_by = "error"

    def clear(self, message: str = "") -> None:
        self.scene().clear()
        self.boxes = {}
        if message:
            text = self.scene().addText(message)
            text.setTextWidth(320)
            text.setDefaultTextColor(QColor("#666666"))
        self.resetTransform()

    def show_flow(self, flow: Flow, drawn: layout.Laid, laid: Laid | None) -> None:
        self.clear()
        scene = self.scene()
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        # Every edge in one item and every arrowhead in another: an item each (136 edges for 32 layers drawn whole)
        # cost the GUI thread as much as the boxes.
        edges, heads = QPainterPath(), QPainterPath()
        heads.setFillRule(Qt.FillRule.WindingFill)
        for _, _, points in drawn.edges:
            if len(points) < 2:
                continue
            edges.moveTo(QPointF(*points[0]))
            for p in points[1:]:
                edges.lineTo(QPointF(*p))
            heads.addPolygon(_arrow(points[-2], points[-1]))
            heads.closeSubpath()
        scene.addPath(edges, QPen(EDGE, 1.2))
        scene.addPath(heads, QPen(EDGE), QBrush(EDGE))
        for vertex in flow.vertices:
            box = drawn.boxes.get(vertex.id)
            if box is None:
                continue
            rect = QRectF(box.x - box.w / 2, box.y - box.h / 2, box.w, box.h)
            item = _Box(rect, vertex.path, vertex.kind, vertex.run)
            members = (
                [laid.layers[m] for m in vertex.members or (vertex.path,) if m in laid.layers]
                if laid is not None and vertex.kind == "module" and vertex.path is not None
                else []
            )
            fill = self._fill(members) or QColor(FILLS[vertex.kind])
            item.setBrush(QBrush(fill))
            outline = (
                QPen(QColor(theme.BAD), 3) if any(m.first_divergent for m in members) else QPen(QColor("#9aa0a6"), 1)
            )
            item.setPen(outline)
            item.setToolTip(self._tip(vertex, members))
            scene.addItem(item)
            lines = [vertex.label] + ([vertex.detail] if vertex.kind == "module" and vertex.detail else [])
            for i, text in enumerate(lines):
                label = QGraphicsSimpleTextItem(text, item)
                label.setFont(font)
                width = label.boundingRect().width()
                label.setPos(box.x - width / 2, rect.top() + layout.PAD / 2 + i * layout.LINE_H)
                label.setFlag(QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent, False)
            if vertex.path is not None and vertex.kind == "module":
                self.boxes[vertex.path] = item
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-12, -12, 12, 12))
        self._fit()

    def _fill(self, layers: list[Layer]) -> QColor | None:
        """A box's colour; a run's is its worst layer's (the largest error, the largest share of time)."""
        if not layers:
            return None
        if self.colour_by == "time":
            return time_fill(max((y.time.share for y in layers if y.time and y.time.share), default=None))
        return error_fill(cells.worst_error(layers))

    @staticmethod
    def _tip(vertex: Any, layers: list[Layer]) -> str:
        if not layers:
            return f"{vertex.label} ({vertex.detail})" if vertex.detail else vertex.label
        if vertex.run:
            return _run_tip(vertex, layers)
        layer = layers[0]
        parts = [f"{vertex.path} ({vertex.detail})", f"params {cells.count(layer.node.params) or 0}"]
        if layer.node.flops:
            parts.append(f"FLOPs {cells.count(layer.node.flops)}")
        if layer.time:
            parts.append(f"time {cells.duration(layer.time.seconds)} ({cells.percent(layer.time.share)})")
        for reference, label in (("vs_eager", "vs eager"), ("vs_float64", "vs float64")):
            shown = cells.error(layer.error(reference))
            if shown:
                parts.append(f"{label}: {shown}")
        return "\n".join(parts)

    def _fit(self) -> None:
        """The whole drawing when it fits at a readable size; else its top at a readable size, to scroll or drag."""
        rect = self.scene().sceneRect()
        if rect.width() <= 0:
            return
        view = self.viewport().rect()
        scale = min(1.0, view.width() / rect.width(), max(0.55, view.height() / rect.height()))
        self.resetTransform()
        readable = max(scale, READABLE_SCALE)
        self.scale(readable, readable)
        self.centerOn(rect.center().x(), rect.top() + view.height() / readable / 2)  # its top at the view's top

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.boxes or self.scene().items():
            self._fit()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt's name
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:  # Ctrl+wheel zooms, the wheel scrolls
            factor = 1.15 if event.angleDelta().y() > 0 else 1 / 1.15
            self.scale(factor, factor)
            return
        super().wheelEvent(event)

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        item = self.itemAt(event.position().toPoint())
        while item is not None and not isinstance(item, _Box):
            item = item.parentItem()
        if isinstance(item, _Box) and item.module_path is not None and event.button() == Qt.MouseButton.LeftButton:
            (self.run_clicked if item.run else self.module_clicked).emit(item.module_path)
            return
        super().mousePressEvent(event)


def _run_tip(vertex: Any, layers: list[Layer]) -> str:
    """A run's tooltip: what it stands for, its worst layer by error and by time, and how to open it."""
    parts = [f"{vertex.label}: {vertex.detail}", f"params {cells.count(sum(y.node.params for y in layers))} in all"]
    timed = [y for y in layers if y.time and y.time.seconds is not None]
    if timed:
        total = sum(y.time.seconds for y in timed if y.time and y.time.seconds)
        hottest = max(timed, key=lambda y: y.time.share or 0 if y.time else 0)
        assert hottest.time is not None
        parts.append(
            f"time {cells.duration(total)} in all; the most: {hottest.node.path} "
            f"{cells.duration(hottest.time.seconds)} ({cells.percent(hottest.time.share)})"
        )
    worst = cells.worst_error(layers)
    if worst is not None:
        culprit = max(layers, key=lambda y: cells.worst_error([y]) or 0.0)
        parts.append(f"worst error: {culprit.node.path}, {worst:.3g}x its tolerance")
    firsts = [y.node.path for y in layers if y.first_divergent]
    if firsts:
        parts.append(f"first divergent: {', '.join(firsts)}")
    parts.append("Click to draw each of them.")
    return "\n".join(parts)


def _arrow(tail: tuple[float, float], head: tuple[float, float], size: float = 7.0) -> QPolygonF:
    dx, dy = head[0] - tail[0], head[1] - tail[1]
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    left = QPointF(head[0] - size * ux + size * 0.5 * uy, head[1] - size * uy - size * 0.5 * ux)
    right = QPointF(head[0] - size * ux - size * 0.5 * uy, head[1] - size * uy + size * 0.5 * ux)
    return QPolygonF([QPointF(*head), left, right])
