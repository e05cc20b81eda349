"""The real window under Xvfb, launched several times in a row as a user would: the first launch compiles the
seed preset, every one shows its preview, and none crashes (torch on a Qt thread segfaulted on torch 2.8/2.9 in
about one launch in several; see neffbench.gui.widgets.background).

The suite launches it :data:`RELAUNCHES` times; ``make bench`` (tests/bench/bench_relaunch.py) 20 times. Also a
script: ``xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.test_gui_relaunch WORKDIR [N]``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Each launch is a Python start, an import of torch and Qt and a window (3 to 4 CPU-seconds): a few here, the
# long loop in make bench.
RELAUNCHES = 4

# One launch through launch.launch(), as `neffbench` starts it; a timer finds the window and drives it.
LAUNCH = r"""
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from neffbench.gui.shell import launch
compile_too = sys.argv[1] == "compile"
seen = {}

def watch():
    from neffbench.gui.shell.main_window import MainWindow
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    if not windows:
        QTimer.singleShot(10, watch)
        return
    window = windows[0]

    def compiled(run):
        seen["compile"] = run.outcome
        window.close()

    def previewed(preview):
        if "preview" in seen:
            return
        seen["preview"] = preview.spec.name
        if not compile_too:
            window.close()
        elif window.panels_ready:
            start_compile()
        else:  # the first preview comes before the other tabs are built
            window.panels_built.connect(start_compile)

    def start_compile():
        window.controllers.compile.finished.connect(compiled)
        window.compile()

    window.preview_controller.computed.connect(previewed)

app = launch.make_app(["neffbench"])
QTimer.singleShot(0, watch)
QTimer.singleShot(150_000, app.quit)
code = launch.launch()
print("RESULT " + json.dumps(seen))
sys.exit(code)
"""


def relaunch(workdir: Path, times: int) -> list[dict]:
    """Launch the window ``times`` times in ``workdir`` (its settings kept from one launch to the next)."""
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}  # the xcb platform, on Xvfb's display
    env.update(HOME=str(workdir), XDG_CONFIG_HOME=str(workdir / "config"), XDG_RUNTIME_DIR=str(workdir / "runtime"))
    (workdir / "runtime").mkdir(mode=0o700, exist_ok=True)
    results = []
    for i in range(times):
        proc = subprocess.run(
            [sys.executable, "-c", LAUNCH, "compile" if i == 0 else "preview"],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        results.append(
            {
                "launch": i + 1,
                "exit": proc.returncode,
                "seen": json.loads(lines[-1][7:]) if lines else None,
                "stderr": proc.stderr[-1500:] if proc.returncode else "",
            }
        )
    return results


@pytest.mark.gui
@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("xvfb-run"), reason="xvfb-run is not installed (apt-get install xvfb xauth)")
def test_repeated_launches_under_xvfb_compile_preview_and_never_crash(tmp_path):
    proc = subprocess.run(
        [
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1600x1000x24",
            sys.executable,
            "-m",
            "tests.test_gui_relaunch",
            str(tmp_path),
            str(RELAUNCHES),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=RELAUNCHES * 240,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [r["exit"] for r in results] == [0] * RELAUNCHES, [r for r in results if r["exit"]]
    assert results[0]["seen"] == {"preview": "seed", "compile": "succeeded"}
    assert all(r["seen"] == {"preview": "seed"} for r in results[1:]), results


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    print(json.dumps(relaunch(target, int(sys.argv[2]) if len(sys.argv) > 2 else RELAUNCHES)))
