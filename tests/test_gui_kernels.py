"""The window with kernels: the chooser swaps in each kernel's form and preview, presets switch the
kernel, a module spec compiles from the window, and a pip-installed plugin's kernel is offered."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.presets import load_preset
from tests.plugin_wheel import install

pytestmark = pytest.mark.gui
DATA = Path(__file__).resolve().parent / "data" / "modules"


def _choose(window, name: str) -> None:
    combo = window.form.kernel_combo
    index = combo.findData(name)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def test_the_chooser_lists_every_kernel_and_swaps_form_and_preview(window):
    combo = window.form.kernel_combo
    names = [combo.itemData(i) for i in range(combo.count())]
    assert names[:4] == ["rope", "rms_norm", "silu_and_mul", "module"]
    rope_panel = window.preview_panel
    _choose(window, "rms_norm")
    assert window.form.spec().kernel == "rms_norm"
    assert window.form.editor("norm.hidden_size").widget.isVisibleTo(window)
    assert window.preview_panel is not rope_panel
    assert window.preview_stack.currentWidget() is window.preview_panel
    _choose(window, "rope")
    assert window.preview_panel is rope_panel and window.form.spec().kernel == "rope"


def test_a_preset_of_another_kernel_switches_the_form(window):
    window.apply_preset("qwen2-7b-rms-norm")
    assert window.form.kernel == "rms_norm"
    assert window.form.spec() == load_preset("qwen2-7b-rms-norm")
    assert window.form.editor("norm.hidden_size").value() == 3584
    menu_titles = [a.iconText() for a in window.presets_menu.actions()]
    assert "rms_norm" in menu_titles and "silu_and_mul" in menu_titles
    assert window.preset_actions["seed"] in window.presets_menu.actions()


def test_rms_norm_preview_draws_the_kernels_plots(make_window, qtbot):
    window = make_window()
    window.apply_preset("llama3-8b-rms-norm")
    with qtbot.waitSignal(window.preview_controller.computed, timeout=60_000) as blocker:
        window.preview_controller.load_torch()
    preview = blocker.args[0]
    assert preview.plots and all(p.title for p in preview.plots)
    assert set(window.preview_panel.plot_widgets()) == {p.title for p in preview.plots}


def test_a_module_spec_compiles_from_the_window(make_window, qtbot, tmp_path):
    window = make_window(workdir=tmp_path / "wd")
    spec = ModuleCompileSpec(
        name="mlp-gui",
        module=ModuleSection(entry=f"{DATA}/mlp.py:make_mlp", kwargs={"hidden_size": 32}),
        inputs={"x": "f32[{tokens},32]"},
        buckets={"tokens": (2, 4)},
    )
    window.form.set_spec(spec)
    assert window.form.kernel == "module" and window.form.errors() == []
    qtbot.waitUntil(lambda: window.compile_action.isEnabled(), timeout=30_000)
    with qtbot.waitSignal(window.controllers.compile.finished, timeout=180_000) as blocker:
        window.compile()
    run = blocker.args[0]
    assert run.outcome == "succeeded"
    assert [r.record["bucket"] for r in run.results] == [{"tokens": 2}, {"tokens": 4}]
    rows = [
        window.panels.compile.results.topLevelItem(i).text(0)
        for i in range(window.panels.compile.results.topLevelItemCount())
    ]
    assert rows == ["tokens=2", "tokens=4"]


def test_the_module_kernels_cpu_check_fills_the_generic_preview(make_window, qtbot):
    window = make_window()
    window.form.set_spec(
        ModuleCompileSpec(
            name="norm", module=ModuleSection(entry=f"{DATA}/instances.py:norm"), inputs={"input": "f32[4,16]"}
        )
    )
    with qtbot.waitSignal(window.preview_controller.checked, timeout=120_000) as blocker:
        window.preview_panel.check_requested.emit()
    report = blocker.args[0]
    assert report["ok"] is True, report
    assert report["interface"]["inputs"] == ["input0 <- input"]
    assert "aten::layer_norm" in report["op_counts"]


@pytest.fixture
def plugin_on_path(tmp_path_factory, monkeypatch):
    site = install(tmp_path_factory.mktemp("plugin") / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_plugin_kernel_is_offered_with_its_form_and_presets(plugin_on_path, make_window):
    window = make_window()
    combo = window.form.kernel_combo
    assert combo.findData("demo_scale") >= 0
    assert combo.itemText(combo.findData("demo_scale")) == "Demo scale (plugin)"
    assert "demo-scale-small" in window.preset_actions
    window.apply_preset("demo-scale-small")
    assert window.form.kernel == "demo_scale"
    assert window.form.editor("scale.scale").value() == 3.0
    edited = dataclasses.replace(window.form.spec(), name="demo-edited")
    window.form.set_spec(edited)
    assert window.current_spec().name == "demo-edited"
