"""``neffbench`` with no arguments: the window is painted before torch loads, the first preview comes from the warm
probe before this process has imported torch or built the other tabs, they follow, and quitting exits cleanly."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gui

# Runs the real launch(); a timer finds its window, watches it, and quits once the preview is shown.
SCRIPT = r"""
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from neffbench.gui.shell import launch
seen = {}

def watch():
    from neffbench.gui.shell.main_window import MainWindow
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    if not windows:
        QTimer.singleShot(0, watch)
        return
    window = windows[0]
    window.first_painted.connect(lambda: seen.setdefault("torch_at_first_paint", "torch" in sys.modules))
    # superqt imports all of itself (a tenth of a second): nothing before the first paint needs it.
    window.first_painted.connect(lambda: seen.setdefault("superqt_at_first_paint", "superqt" in sys.modules))
    def previewed(p):
        # The warm probe computed it: this process has not imported torch yet, nor built the other tabs.
        seen.setdefault("torch_at_first_preview", "torch" in sys.modules)
        seen.setdefault("other_tabs_at_first_preview", window.panels_ready)
        seen.setdefault("preview", p.spec.name)
    def built():
        seen["panels"] = True
        window.preview_controller.torch_loaded.connect(lambda v: window.close())
    window.preview_controller.computed.connect(previewed)
    window.panels_built.connect(built)

app = launch.make_app(["neffbench"])
QTimer.singleShot(0, watch)
QTimer.singleShot(120_000, app.quit)
code = launch.launch()
print(seen)
sys.exit(code)
"""


def test_launch_paints_before_torch_loads_then_fills_in_and_exits_cleanly(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=180, cwd=tmp_path, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    assert seen == {
        "torch_at_first_paint": False,
        "superqt_at_first_paint": False,
        "torch_at_first_preview": False,
        "other_tabs_at_first_preview": False,
        "preview": "seed",
        "panels": True,
    }
    # Settings were saved where QSettings keeps them for this user.
    assert any(p.suffix == ".conf" for p in tmp_path.rglob("*"))


def test_the_window_reads_the_kernels_from_the_metadata_once_and_again_when_a_distribution_is_installed(
    qtbot, settings_path, monkeypatch, tmp_path, request
):
    """The form, the preset menu and the restored spec each list the kernels: one read of the entry points serves
    them all (each read parses every installed distribution's metadata), and the listings after it, until something
    is installed."""
    from importlib import metadata

    from neffbench import installed
    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings
    from neffbench.kernels import registry

    reads = []
    real = metadata.entry_points
    monkeypatch.setattr(metadata, "entry_points", lambda **kw: reads.append(kw.get("group")) or real(**kw))
    installed.forget()
    request.addfinalizer(installed.forget)
    window = MainWindow(Settings.at(settings_path), background=False, defer_panels=True)
    qtbot.addWidget(window)
    assert len(reads) == 1
    registry.names()
    assert len(reads) == 1
    (tmp_path / "site" / "plugin-1.0.dist-info").mkdir(parents=True)  # as pip installs one into a folder on the path
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    registry.names()
    assert len(reads) == 2
