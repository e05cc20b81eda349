"""The window's compiles and the cache: an identical compile is served and says so; Recompile compiles again."""

from __future__ import annotations

import pytest

from neffbench.presets import load_preset

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def _compile(window, qtbot, action):
    qtbot.waitUntil(lambda: window.compile_action.isEnabled(), timeout=30_000)
    with qtbot.waitSignal(window.controllers.compile.finished, timeout=180_000) as blocker:
        action()
    return blocker.args[0]


def test_a_second_identical_compile_is_served_and_recompile_is_not(make_window, qtbot, tmp_path):
    window = make_window(workdir=tmp_path / "wd")
    window.form.set_spec(load_preset("seed"))
    first = _compile(window, qtbot, window.compile)
    assert first.outcome == "succeeded" and not first.results[0].record["cache"]["hit"]
    second = _compile(window, qtbot, window.compile)
    assert second.results[0].record["cache"]["hit"] is True
    assert window.panels.compile.results.topLevelItem(0).text(1) == "succeeded (cached)"
    headline = window.panels.compile.state_label.text()
    assert (
        "served from the cache" in headline and "checked on CPU" not in headline and "bucket compiled" not in headline
    )
    assert window.recompile_action.isEnabled()
    third = _compile(window, qtbot, window.recompile_action.trigger)
    assert third.results[0].record["cache"] == {"hit": False, "reason": "--no-cache"}
    assert window.panels.compile.results.topLevelItem(0).text(1) == "succeeded"
