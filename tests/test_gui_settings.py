"""What the window remembers across launches: geometry, splitters, the last spec, the workdir and the tab."""

from __future__ import annotations

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
