"""The mouse wheel changes a number box or a choice only while it has focus: scrolling past one scrolls the form.

Every spin box and combo box of the window is walked (every kernel's form, the module form with its generated
rows after a Resolve, every tab) and of the sweep dialog (with its rows)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QPushButton, QWidget

from neffbench.kernels import registry

pytestmark = pytest.mark.gui

RESOLVE_TIMEOUT_MS = 60_000
FACTORY = """
from typing import Literal

from torch import nn


def make(layers: int = 3, act: Literal["gelu", "relu"] = "gelu"):
    return nn.Sequential(*[nn.Linear(4, 4) for _ in range(layers)])
"""


@pytest.fixture(autouse=True)
def _warm_probe():
    yield
    from neffbench.probe.client import close_shared

    close_shared()


def _wheel(widget: QWidget, notches: int = -3) -> None:
    """``notches`` clicks of the wheel over ``widget`` (negative: towards the user, scrolling down)."""
    at = QPointF(widget.rect().center())
    event = QWheelEvent(
        at,
        QPointF(widget.mapToGlobal(at.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def _state(widget: QWidget):
    return widget.currentIndex() if isinstance(widget, QComboBox) else widget.text()


def _fields(root: QWidget) -> list[QWidget]:
    found = [w for kind in (QAbstractSpinBox, QComboBox) for w in root.findChildren(kind)]
    return [w for w in found if w.isEnabled()]  # a disabled field takes no wheel anyway


def _name(widget: QWidget) -> str:
    return f"{type(widget).__name__} {widget.objectName() or widget.toolTip()[:40]!r}"


def _assert_wheel_passes_by(fields: list[QWidget]) -> None:
    changed = []
    for widget in fields:
        widget.clearFocus()
        before = _state(widget)
        _wheel(widget, -3)
        _wheel(widget, 2)
        if _state(widget) != before:
            changed.append(_name(widget))
    assert not changed, changed
    # Nor does the wheel give them focus (a click or Tab does).
    assert [_name(w) for w in fields if w.focusPolicy() != Qt.FocusPolicy.StrongFocus] == []


def test_no_field_of_any_form_or_tab_changes_under_the_wheel_without_focus(make_window, qtbot, tmp_path):
    window = make_window()
    window.resize(1280, 800)
    for kernel in registry.available():
        window.form.kernel_combo.setCurrentIndex(window.form.kernel_combo.findData(kernel.name))
        window.form.kernel_combo.activated.emit(window.form.kernel_combo.currentIndex())
        assert window.form.kernel == kernel.name
    (tmp_path / "factory.py").write_text(FACTORY)
    window.form.kernel_combo.activated.emit(window.form.kernel_combo.findData("module"))
    module_form = window.form.current()
    module_form.editor("module.entry").widget.setText(f"{tmp_path / 'factory.py'}:make")
    module_form.editor("module.entry").edited.emit()
    with qtbot.waitSignal(module_form.resolved, timeout=RESOLVE_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(module_form.findChild(QPushButton, "resolve-button"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["ok"], blocker.args[0]
    generated = [
        module_form.findChild(QAbstractSpinBox, "kwargs.layers"),
        module_form.findChild(QComboBox, "kwargs.act"),
    ]
    assert all(generated), "the Resolve made no kwargs rows to walk"
    fields = _fields(window)
    assert len(fields) > 40 and set(generated) <= set(fields)
    _assert_wheel_passes_by(fields)
    assert module_form.spec().module.kwargs == {}  # nothing was set behind the user's back

    # With focus, the wheel is the field's.
    layers = generated[0]
    layers.setFocus()
    qtbot.waitUntil(layers.hasFocus, timeout=5_000)
    _wheel(layers, 1)
    assert layers.text() == "4" and module_form.spec().module.kwargs == {"layers": 4}


def test_the_wheel_over_a_field_scrolls_the_form(make_window, qtbot):
    window = make_window()
    window.resize(1024, 700)
    window.apply_preset("seed")
    form = window.form.current()
    bar = form.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5_000)
    box = form.editor("model.num_heads_q").widget
    before = box.text()
    _wheel(box, -3)
    assert bar.value() > 0 and box.text() == before


def test_no_field_of_the_sweep_dialog_changes_under_the_wheel_without_focus(qtbot):
    from neffbench.gui.sweeps.dialog import SweepDialog
    from neffbench.presets import load_preset

    dialog = SweepDialog(load_preset("seed"), backend="cpu-check")
    qtbot.addWidget(dialog)
    dialog.add_axis("compiler.auto_cast", "none,all")
    dialog.show()
    qtbot.waitExposed(dialog)
    fields = _fields(dialog)
    assert len(fields) >= 5
    _assert_wheel_passes_by(fields)
    qtbot.waitUntil(lambda: dialog.cached is not None, timeout=5_000)
