"""A sweep's points the cache will serve are known before it starts, and counted apart from the ones to compile:
in the core (``cached_points``) and in the sweep dialog ("4 points: 1 to compile, 3 from the cache")."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from neffbench.presets import load_preset
from tests.cli import neffbench

pytestmark = [pytest.mark.slow]
OVER = "inputs.num_tokens=1,2,4,8"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """Three of the sweep's four points compiled already (cpu-check), one job per bucket."""
    root = tmp_path_factory.mktemp("cached")
    done = neffbench(
        "compile", "seed", "--num-tokens", "1", "2", "4", "--backend", "cpu-check", "--workdir", str(root), cwd=root
    )
    assert done.returncode == 0, done.stderr
    return root


def seed_in(workdir: Path):
    return dataclasses.replace(load_preset("seed"), workdir=str(workdir))


def test_the_points_the_cache_serves_are_found_in_one_pass(workdir):
    from neffbench.sweeps import plan
    from neffbench.sweeps.sweep import cached_points

    the_plan = plan(seed_in(workdir), [OVER], backend="cpu-check")
    assert the_plan.count == 4
    found = cached_points(the_plan, workdir, "cpu-check")
    assert {the_plan.points[i].values["inputs.num_tokens"] for i in found} == {1, 2, 4}
    assert cached_points(the_plan, workdir / "elsewhere", "cpu-check") == frozenset()  # no such workdir


@pytest.mark.gui
def test_the_sweep_dialog_counts_the_cached_points_apart(workdir, qtbot):
    from neffbench.gui.sweeps.dialog import SweepDialog

    dialog = SweepDialog(seed_in(workdir), backend="cpu-check")
    qtbot.addWidget(dialog)
    row = dialog._rows[0]
    row.field.setCurrentIndex(row.field.findData("inputs.num_tokens"))
    row.values.setText("1,2,4,8")
    qtbot.waitUntil(lambda: dialog.plan.count == 4 and dialog.cached is not None, timeout=10_000)
    assert dialog.summary.text().startswith("4 points: 1 to compile, 3 from the cache"), dialog.summary.text()
    assert dialog.start_button.isEnabled()
    row.values.setText("16,32")  # none compiled yet
    qtbot.waitUntil(lambda: dialog.plan.count == 2 and dialog.cached is not None, timeout=10_000)
    assert dialog.summary.text().startswith("2 points: 2 to compile ·"), dialog.summary.text()
