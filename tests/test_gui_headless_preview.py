"""``neffbench preview`` renders the window's preview plots to PNG without a display."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

pytestmark = pytest.mark.gui


def test_preview_command_writes_pngs_and_figures(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "plots"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "neffbench",
            "preview",
            "gpt-neox-20b",
            "--out",
            str(out),
            "--token",
            "2",
            "--head",
            "3",
            "--cache-dtype",
            "bfloat16",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for stem in ("preview", "tables", "frequencies", "rotation"):
        image = QImage(str(out / f"{stem}.png"))
        assert not image.isNull() and image.width() > 400 and image.height() > 200, stem
    full = QImage(str(out / "preview.png"))
    assert (full.width(), full.height()) == (1400, 900)
    numbers = json.loads((out / "preview.json").read_text())
    assert numbers["pair_norm_check"]["passed"] is True
    assert numbers["cache_dtype"] == "bfloat16" and numbers["cast_error"] > 0
    assert "pair-norm check PASS" in proc.stdout


def test_preview_command_reports_spec_errors(tmp_path, capsys):
    from neffbench.cli.main import main

    assert main(["preview", "seed", "--rotary-dim", "63", "--out", str(tmp_path)]) == 2
    assert "even" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def _preview(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run(
        [sys.executable, "-m", "neffbench", "preview", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


@pytest.mark.slow
def test_preview_of_another_kernel_draws_its_plots_and_its_cpu_check(tmp_path):
    out = tmp_path / "silu"
    proc = _preview("llama3-8b-silu-and-mul", "--intermediate-size", "256", "--out", str(out), "--check")
    assert proc.returncode == 0, proc.stderr
    for stem in ("preview", "plot-1", "check"):
        image = QImage(str(out / f"{stem}.png"))
        assert not image.isNull() and image.width() > 300, stem
    numbers = json.loads((out / "preview.json").read_text())
    assert numbers["plots"] and all(p["title"] for p in numbers["plots"])
    check = json.loads((out / "check.json").read_text())
    assert check["ok"] is True and check["interface"]["inputs"] == ["input0 <- x"]
    assert "CPU check: passed" in proc.stdout


@pytest.mark.slow
def test_preview_of_a_module_is_its_cpu_check_and_fails_with_the_sentence(tmp_path):
    from pathlib import Path

    entry = Path(__file__).resolve().parent / "data" / "modules" / "problems.py"
    proc = _preview(f"{entry}:NonzeroModule", "--input", "x:f32[8]", "--out", str(tmp_path))
    assert proc.returncode == 1
    assert "error: the traced graph uses aten::nonzero" in proc.stdout
    check = json.loads((tmp_path / "check.json").read_text())
    assert check["data_dependent"] == ["aten::nonzero"]
    assert not QImage(str(tmp_path / "check.png")).isNull()
