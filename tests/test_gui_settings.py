"""What the window remembers across launches: geometry, every splitter, each kernel's last spec (the module form with
its Resolve), the log's wrapping, the workdir and the tab."""

from __future__ import annotations

import dataclasses

import pytest

pytestmark = pytest.mark.gui


def test_a_second_launch_restores_the_first(make_window, tmp_path, qtbot):
    first = make_window(workdir=tmp_path / "elsewhere")
    first.apply_preset("llama3.1-8b")
    first.form.editor("compiler.optlevel").widget.setValue(3)
    # Within the offscreen platform's 800x800 screen (as far as the window's minimum width allows),
    # so that restoring does not have to move it onto the screen.
    width = first.minimumSizeHint().width()
    first.resize(width, 600)
    first.splitter.setSizes([500, 734])
    first.tabs.setCurrentIndex(2)
    sizes = first.splitter.sizes()
    first.close()

    second = make_window()
    assert second.current_spec() == first.current_spec()
    assert second.form.spec().compiler.optlevel == 3
    assert second.workdir == tmp_path / "elsewhere"
    assert second.workdir_edit.text() == str(tmp_path / "elsewhere")
    assert second.tabs.currentIndex() == 2
    assert abs(second.width() - width) <= 8 and abs(second.height() - 600) <= 8  # the default is 1500x940
    assert second.splitter.sizes() == sizes


def test_a_first_launch_starts_from_the_seed_preset(window):
    assert window.form.spec().name == "seed"
    assert window.tabs.currentIndex() == 0


def test_a_corrupt_saved_spec_falls_back_to_the_preset(make_window, settings_path):
    settings_path.write_text('[spec]\ntoml="this is = not [ toml"\n')
    assert make_window().form.spec().name == "seed"


FACTORY = """
from torch import nn


def make(hidden: int = 64, layers: int = 2):
    return nn.Sequential(*[nn.Linear(hidden, hidden) for _ in range(layers)])
"""


@pytest.fixture
def _warm_probe():
    yield
    from neffbench.probe.client import close_shared

    close_shared()


def _show_kernel(window, name: str) -> None:
    combo = window.form.kernel_combo
    combo.setCurrentIndex(combo.findData(name))
    combo.activated.emit(combo.currentIndex())
    assert window.form.kernel == name


def test_each_kernels_values_the_logs_wrapping_and_every_tabs_sizes_come_back(make_window):
    first = make_window()
    first.apply_preset("seed")
    first.form.editor("compiler.target").set_value("trn2")
    first.form.editor("compiler.lnc").widget.setValue(1)
    first.form.editor("compiler.target").edited.emit()
    rope = first.form.spec()
    assert (rope.compiler.target, rope.compiler.lnc) == ("trn2", 1)
    _show_kernel(first, "module")
    first.form.editor("module.entry").widget.setText("torch.nn:Linear")
    first.form.editor("module.entry").edited.emit()
    first.panels.compile.log_view.wrap_check.setChecked(True)
    first.resize(1280, 800)
    sizes = {}
    for key in ("numerics", "sweeps", "artifacts_job"):
        splitter = first._splitters()[key]
        splitter.setSizes([120, 300])
        sizes[key] = splitter.sizes()
    first.close()

    second = make_window()
    assert second.form.kernel == "module" and second.form.spec().module.entry == "torch.nn:Linear"
    assert second.panels.compile.log_view.wrap_check.isChecked()
    assert {key: second._splitters()[key].sizes() for key in sizes} == sizes
    # Edits never saved to a file are still unsaved after the restart: a preset would ask before replacing them.
    assert second.form.has_unsaved_edits("rope")
    second.close()  # the RoPE form was never shown this time: its values are kept all the same

    third = make_window()
    _show_kernel(third, "rope")
    assert third.form.spec() == dataclasses.replace(rope, workdir=third.form.spec().workdir)
    assert third.form.has_unsaved_edits("rope")


def test_the_module_forms_resolve_comes_back_while_its_file_is_unchanged(
    make_window, qtbot, tmp_path, monkeypatch, _warm_probe
):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QPushButton

    from neffbench.gui.forms.field_editors import NumberBox
    from neffbench.kernels.module.gui.report import NOT_RESOLVED
    from neffbench.spec import anchored_here

    (tmp_path / "factory.py").write_text(FACTORY)
    monkeypatch.chdir(tmp_path)
    first = make_window()
    _show_kernel(first, "module")
    form = first.form.current()
    form.editor("module.entry").widget.setText("factory.py:make")  # typed relative to where the window started
    form.editor("module.entry").edited.emit()
    with qtbot.waitSignal(form.resolved, timeout=60_000) as blocker:
        qtbot.mouseClick(form.findChild(QPushButton, "resolve-button"), Qt.MouseButton.LeftButton)
    assert blocker.args[0]["ok"], blocker.args[0]
    form.findChild(NumberBox, "kwargs.hidden").setValue(32)
    spec = form.spec()
    assert spec.module.kwargs == {"hidden": 32}
    first.close()

    second = make_window()
    form = second.form.current()
    hidden = form.findChild(NumberBox, "kwargs.hidden")
    assert hidden is not None and hidden.text() == "32"  # a generated field, not a TOML row reading "hidden = 32"
    summary = form.findChild(QLabel, "resolve-summary").text()
    assert NOT_RESOLVED not in summary and "earlier session" in summary
    # Kept with its paths absolute (the next launch may be in another folder), the Resolve with it.
    assert second.form.spec() == dataclasses.replace(anchored_here(spec), workdir=second.form.spec().workdir)
    second.close()

    (tmp_path / "factory.py").write_text(FACTORY + "\n# edited\n")
    third = make_window()
    form = third.form.current()
    assert form.findChild(NumberBox, "kwargs.hidden") is None  # of a file edited since: Resolve again
    assert third.form.spec().module.kwargs == {"hidden": 32}
