"""The mouse wheel changes a number box or a choice only while it has focus; otherwise it scrolls what holds it.

Scrolling a long form passes spin boxes and combo boxes under the pointer: Qt's default lets each one it passes
take the wheel (3 layers became -6 on the way down). ``guard`` gives a field the focus policy that a click or Tab
gives focus and the wheel does not, and an event filter that hands an unfocused field's wheel to the scroll area
around it. ``guard_all`` applies it to every such field under a widget.
"""

from __future__ import annotations

import functools
from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

FIELDS = (QAbstractSpinBox, QComboBox)

W = TypeVar("W", bound=QWidget)


class _WheelGuard(QObject):
    """One filter for every guarded field (it keeps no state of its own)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(event, QWheelEvent) or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        area = _scrolling_ancestor(watched)
        if area is not None:
            viewport = area.viewport()
            at = QPointF(watched.mapTo(viewport, event.position().toPoint()))
            forwarded = QWheelEvent(
                at,
                event.globalPosition(),
                event.pixelDelta(),
                event.angleDelta(),
                event.buttons(),
                event.modifiers(),
                event.phase(),
                event.inverted(),
            )
            QApplication.sendEvent(viewport, forwarded)
        event.accept()
        return True  # the field never sees it


def _scrolling_ancestor(widget: QWidget) -> QAbstractScrollArea | None:
    """The nearest scroll area around ``widget`` that has somewhere to scroll, else the nearest one."""
    nearest = None
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and parent.viewport().isAncestorOf(widget):
            nearest = nearest or parent
            bar = parent.verticalScrollBar()
            if bar.maximum() > bar.minimum():
                return parent
        parent = parent.parentWidget()
    return nearest


@functools.cache
def _the_guard() -> _WheelGuard:
    return _WheelGuard(QApplication.instance())


def guard(widget: W) -> W:
    """``widget`` (a spin box or combo box; anything else is left as it is) takes the wheel only with focus."""
    if isinstance(widget, FIELDS):
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a click or Tab focuses it, the wheel does not
        widget.removeEventFilter(_the_guard())  # installed once, however often it is guarded
        widget.installEventFilter(_the_guard())
    return widget


def guard_all(root: QWidget) -> None:
    """Every spin box and combo box under ``root`` (and ``root`` itself) takes the wheel only with focus."""
    guard(root)
    for kind in FIELDS:
        for widget in root.findChildren(kind):
            guard(widget)
