"""Two windows on one workdir: the second says so (title, status bar) and leaves the first's settings be; the claim
goes with its window, and a window on another workdir is a first window of its own."""

from __future__ import annotations

import pytest

from neffbench.jobs.workdir_claim import WorkdirClaim

pytestmark = pytest.mark.gui


def test_a_claim_is_the_first_until_released_and_names_its_holder(tmp_path):
    first, second = WorkdirClaim(tmp_path / "wd", tmp_path / "locks"), WorkdirClaim(tmp_path / "wd", tmp_path / "locks")
    assert first.take() and not second.take()
    assert second.holder is not None and not second.first
    assert WorkdirClaim(tmp_path / "other", tmp_path / "locks").take()
    first.release()
    assert WorkdirClaim(tmp_path / "wd", tmp_path / "locks").take()
    assert not (tmp_path / "wd").exists()  # nothing is written into the workdir


def test_the_second_window_says_so_and_keeps_the_firsts_settings(make_window, tmp_path, qtbot):
    first = make_window()
    assert first.presence.first and "second window" not in first.windowTitle()
    first.set_workdir(tmp_path / "workdir")
    second = make_window(workdir=tmp_path / "workdir")
    assert not second.presence.first and second.windowTitle().endswith("(second window on this workdir)")
    assert second.presence.label.isVisible()
    assert "has " + str(tmp_path / "workdir") in second.presence.label.toolTip()

    first.settings.set_text("workdir", "kept")
    second.set_workdir(tmp_path / "elsewhere")  # on a workdir of its own it is a first window again
    assert second.presence.first and not second.presence.label.isVisible()
    second.set_workdir(tmp_path / "workdir")
    second.close()
    assert first.settings.text("workdir") == "kept"  # the second window did not save over the first's
    first.close()
    assert first.settings.text("workdir") == str(tmp_path / "workdir")
    third = make_window(workdir=tmp_path / "workdir")
    assert third.presence.first  # the first window's claim ended with it
