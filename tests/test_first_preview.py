"""The first preview comes from the warm probe while the window's own torch loads; and if the probe gives none, the
window computes it itself. Also: the extras a missing optional library names."""

from __future__ import annotations

import pickle

import pytest

from neffbench.presets import load_preset
from neffbench.spec import from_dict, previewing, to_dict

SEED = load_preset("seed")


@pytest.mark.slow
def test_the_probe_pickles_the_preview_the_window_would_compute(tmp_path):
    from neffbench.probe.client import WarmProbe

    probe = WarmProbe()
    try:
        path = tmp_path / "preview.pickle"
        report = probe.ask("preview", {"spec": to_dict(SEED), "bucket": None, "path": str(path)}, timeout=120)
        assert report == {"ok": True, "path": str(path)}
        remote = pickle.loads(path.read_bytes())
        here = previewing.compute(SEED)
        assert remote.spec == here.spec and (remote.table == here.table).all()
        assert remote.pair_check == here.pair_check
        # A spec the kernel refuses is a sentence, as in the window's own compute.
        bad = to_dict(SEED)
        bad["model"]["rotary_dim"] = 3
        refused = probe.ask("preview", {"spec": bad, "bucket": None, "path": str(path)}, timeout=120)
        assert refused["ok"] and refused["refused"] == previewing.compute(from_dict(bad))
    finally:
        probe.close()


@pytest.mark.gui
def test_with_no_preview_from_the_probe_the_window_computes_it_itself(qtbot, monkeypatch):
    from neffbench.gui.preview import controller as pc

    asked = []

    def no_probe(spec, bucket):
        asked.append(spec.name)
        raise pc.ProbePreviewError("the probe ended without a report (exit code 1)")

    monkeypatch.setattr(pc, "_compute_in_probe", no_probe)
    controller = pc.PreviewController(probe_first=True)
    with qtbot.waitSignal(controller.computed, timeout=120_000) as shown:
        controller.request(SEED, now=True)
    assert asked == ["seed"] and controller.is_ready
    assert shown.args[0].spec.name == "seed"


@pytest.mark.gui
def test_the_probe_preview_is_shown_then_this_process_loads_torch_and_takes_over(qtbot, monkeypatch):
    from neffbench.gui.preview import controller as pc

    def from_probe(spec, bucket):
        return previewing.compute(spec, bucket)  # as the probe computes it, without the child

    monkeypatch.setattr(pc, "_compute_in_probe", from_probe)
    computes = []
    monkeypatch.setattr(pc, "_compute", lambda spec, bucket: computes.append(spec.name) or previewing.compute(spec))
    controller = pc.PreviewController(probe_first=True, debounce_ms=0)
    assert not controller.is_ready
    with qtbot.waitSignal(controller.computed, timeout=60_000):
        controller.request(SEED, now=True)
    assert computes == []  # the probe's
    qtbot.waitUntil(lambda: controller.is_ready, timeout=120_000)  # loading started behind the shown preview
    with qtbot.waitSignal(controller.computed, timeout=60_000):
        controller.request(SEED)
    assert computes == ["seed"]
    # A panel wired after the first preview is shown it again.
    seen = []
    controller.computed.connect(seen.append)
    controller.replay()
    assert [p.spec.name for p in seen] == ["seed"]


def test_a_missing_optional_library_names_the_extra_that_installs_it(monkeypatch):
    import importlib

    from neffbench.kernels.module import entry
    from neffbench.usercode import errors

    exc = ModuleNotFoundError("No module named 'transformers'", name="transformers")
    assert errors.message(exc) == "No module named 'transformers' (install it with pip install 'neffbench[hf]')"
    assert errors.message(ModuleNotFoundError("No module named 'mylib'", name="mylib")) == "No module named 'mylib'"

    def missing(name):
        raise ModuleNotFoundError(f"No module named '{name}'", name="transformers")

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(entry.EntryError, match=r"no module named 'transformers' \(install it with .*neffbench\[hf\]"):
        entry.resolve("transformers:BertModel")


@pytest.mark.gui
def test_each_tab_says_it_is_starting_until_its_panel_is_built_and_then_not(qtbot, settings_path):
    from PySide6.QtWidgets import QLabel

    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings

    window = MainWindow(Settings.at(settings_path), background=False, defer_panels=True)
    qtbot.addWidget(window)

    def waiting() -> list[str]:
        return [
            label.text()
            for page in window._pages
            for label in page.findChildren(QLabel, "tab-placeholder")
            if not label.isHidden()
        ]

    assert waiting()[0] == "Loading torch for the preview…" and set(waiting()[1:]) == {"Starting up…"}
    window.build_panels()
    assert waiting() == []


@pytest.mark.gui
def test_the_tabs_panels_and_controllers_are_held_once_built_and_refused_before(qtbot, settings_path):
    from neffbench.gui.shell import tabs
    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings

    window = MainWindow(Settings.at(settings_path), background=False, defer_panels=True)
    qtbot.addWidget(window)
    assert not window.panels_ready
    with pytest.raises(AssertionError, match="built after the first paint"):
        _ = window.panels
    with pytest.raises(AssertionError, match="built after the first paint"):
        _ = window.controllers
    window.build_panels()
    assert window.panels_ready
    panels, controllers = window.panels, window.controllers
    for tab, panel in (
        (tabs.COMPILE_TAB, panels.compile),
        (tabs.ARTIFACTS_TAB, panels.artifacts),
        (tabs.RUN_TAB, panels.run),
        (tabs.SWEEPS_TAB, panels.sweeps.panel),
        (tabs.NUMERICS_TAB, panels.numerics),
        (tabs.STRUCTURE_TAB, panels.structure),
    ):
        assert window.tabs.widget(tab).isAncestorOf(panel), tabs.TAB_TITLES[tab]
    assert {controllers.compile.parent(), controllers.run.parent(), controllers.compare.parent()} == {window}
