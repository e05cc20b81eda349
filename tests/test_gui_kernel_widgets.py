"""A kernel's widgets are checked against what the window asks of them when they are imported, never probed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from neffbench.gui.forms.contribution import KernelForm, spec_form
from neffbench.gui.preview.contribution import PreviewPanel, preview_panel
from neffbench.gui.widgets.kernel_widget import KernelWidgetError, checked, members
from neffbench.kernels import registry

pytestmark = pytest.mark.gui


class HalfAPanel(QWidget):
    """A preview panel written before the window asked for a CPU check: it draws, and nothing more."""

    bucket_chosen = Signal(int)

    def show_status(self, text, *, error=False): ...

    def show_invalid(self, message): ...

    def show_preview(self, preview): ...


class NotAWidget:
    pass


@pytest.mark.parametrize("name", registry.names())
def test_every_kernel_s_widgets_are_what_the_window_asks_for(name, qtbot):
    kernel = registry.get(name)
    panel = preview_panel(kernel)
    form = spec_form(kernel)
    qtbot.addWidget(panel)
    qtbot.addWidget(form)
    assert all(hasattr(panel, m) for m in members(PreviewPanel))
    assert all(hasattr(form, m) for m in members(KernelForm))


def test_a_panel_lacking_what_the_window_asks_is_refused_with_what_it_lacks(qtbot):
    with pytest.raises(KernelWidgetError) as caught:
        checked(HalfAPanel, PreviewPanel, kernel="rope", name="tests.test_gui_kernel_widgets:HalfAPanel")
    assert str(caught.value) == (
        "The PreviewPanel tests.test_gui_kernel_widgets:HalfAPanel of kernel 'rope' lacks check_requested, "
        "chosen_bucket, keep_state_requested, save_images, show_check, show_check_running, splitters: the window "
        "asks every PreviewPanel for them (neffbench.gui.preview.contribution.PreviewPanel)."
    )


def test_a_named_widget_that_is_no_widget_or_no_name_is_refused(monkeypatch):
    rope = registry.get("rope")
    with pytest.raises(KernelWidgetError, match="is a type, not a QWidget class"):
        checked(NotAWidget, KernelForm, kernel="rope", name="tests.test_gui_kernel_widgets:NotAWidget")
    monkeypatch.setattr(type(rope), "gui_preview", "no_such_module_xyz:Panel")
    with pytest.raises(KernelWidgetError, match="could not be imported: ModuleNotFoundError"):
        preview_panel(rope)
