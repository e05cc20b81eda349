"""The window never runs work on a thread that Python did not create (pytorch/pytorch#150548).

torch 2.8 and 2.9 segfault in their one-time set-up when first called from such a thread (a QThreadPool
or QThread thread), and which background job touches torch first is a matter of timing. So: no GUI
module hands work to a Qt thread (checked in the source), the window's background work is seen to run on
Python threads (checked at run time, on any torch), and on torch 2.8/2.9 the window that would have
crashed survives (a pool of two Qt threads made the old code crash).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"
REPO = APP.parents[1]
# Names that start work on a Qt-made thread: superqt's workers run on QThreadPool.globalInstance().
QT_THREADS = {
    "create_worker",
    "thread_worker",
    "new_worker_qthread",
    "QThreadPool",
    "QRunnable",
    "QThread",
    "QtConcurrent",
    "WorkerBase",
    "FunctionWorker",
    "GeneratorWorker",
}


def _gui_modules() -> list[Path]:
    return sorted(
        [
            *APP.joinpath("gui").rglob("*.py"),
            *APP.joinpath("kernels").glob("*/gui/*.py"),
            *APP.joinpath("kernels").glob("*/gui.py"),
        ]
    )


def _names_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.add(node.name.rpartition(".")[2])
    return used


def test_no_gui_module_hands_work_to_a_qt_thread():
    offenders = {str(p.relative_to(APP)): sorted(_names_used(p) & QT_THREADS) for p in _gui_modules()}
    assert {k: v for k, v in offenders.items() if v} == {}, (
        "run background work with neffbench.gui.widgets.background (Python threads): torch 2.8/2.9 segfault on Qt's threads"
    )


@pytest.mark.gui
def test_background_calls_run_on_python_threads_and_report_on_the_gui_thread(qtbot):
    from neffbench.gui.widgets import background

    seen = {}

    def work(x):
        seen["worker"] = threading.current_thread()
        return x * 2

    def returned(value):
        seen["value"], seen["reported_on"] = value, threading.current_thread()

    background.start(work, 21, returned=returned)
    qtbot.waitUntil(lambda: "value" in seen and background.running() == 0, timeout=30_000)
    assert seen["value"] == 42 and seen["reported_on"] is threading.main_thread()
    # A thread Python created is a threading.Thread; one it did not shows up as a _DummyThread.
    assert not isinstance(seen["worker"], threading._DummyThread) and seen["worker"] is not threading.main_thread()


@pytest.mark.gui
def test_a_failure_reaches_errored_and_finished_comes_last(qtbot):
    from neffbench.gui.widgets import background

    order = []

    def boom():
        raise ValueError("no")

    background.start(
        boom,
        returned=lambda _: order.append("returned"),
        errored=lambda e: order.append(str(e)),
        finished=lambda: order.append("finished"),
    )
    qtbot.waitUntil(lambda: order[-1:] == ["finished"], timeout=30_000)
    assert order == ["no", "finished"]


@pytest.fixture
def no_qt_threads(monkeypatch):
    """Any start of a Qt thread-pool job or a QThread fails the test, whoever asks for it."""
    from PySide6.QtCore import QThread, QThreadPool

    started = []

    def refuse(self, *args, **kwargs):
        started.append(type(self).__name__)
        raise AssertionError("work was handed to a Qt thread: torch 2.8/2.9 segfault there")

    for name in ("start", "tryStart", "startOnReservedThread"):
        if hasattr(QThreadPool, name):
            monkeypatch.setattr(QThreadPool, name, refuse)
    monkeypatch.setattr(QThread, "start", refuse)
    return started


@pytest.mark.gui
@pytest.mark.slow
def test_the_window_does_its_background_work_on_python_threads(qtbot, make_window, no_qt_threads, monkeypatch):
    """The preview (torch's import and compute), the toolchain check, a scan and a CPU check, at run time."""
    import neffbench.gui.preview.controller as pc
    import neffbench.gui.shell.toolchain_status as ds
    from neffbench.gui.widgets import background

    threads: dict[str, threading.Thread] = {}
    for module, name in ((pc, "_load_torch"), (pc, "_compute"), (pc, "_check"), (ds, "_gather")):

        def spy(*args, _original=getattr(module, name), _name=name, **kwargs):  # noqa: B008 - bound per loop
            threads[_name] = threading.current_thread()
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    window = make_window(background=False)
    with qtbot.waitSignal(window.preview_controller.computed, timeout=120_000):
        window.start_background()  # torch, the toolchain check, the workdir scan
    window.preview_controller.request_check(window.current_spec())
    qtbot.waitUntil(lambda: "_check" in threads and not window.preview_controller.is_checking, timeout=120_000)
    qtbot.waitUntil(lambda: background.running() == 0, timeout=60_000)
    assert no_qt_threads == []
    assert set(threads) == {"_load_torch", "_compute", "_check", "_gather"}
    for name, thread in threads.items():
        assert not isinstance(thread, threading._DummyThread), f"{name} ran on a thread Python did not create"
        assert thread is not threading.main_thread(), f"{name} ran on the GUI thread"


CRASH_PROBE = """
import sys
from PySide6.QtCore import QThreadPool, QTimer
from neffbench.gui.shell import launch
from neffbench.gui.shell.main_window import MainWindow
from PySide6.QtWidgets import QApplication

app = launch.make_app(["neffbench"])
seen = []

def watch():
    # The old code crashed on torch 2.9 with two pool threads (launch() asked for four): nothing may use
    # them now, so two is as good as any.
    QThreadPool.globalInstance().setMaxThreadCount(2)
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    if not windows:
        QTimer.singleShot(10, watch)
        return
    window = windows[0]
    window.preview_controller.computed.connect(lambda p: (seen.append(p.spec.name), window.close()))

QTimer.singleShot(0, watch)
QTimer.singleShot(120_000, app.quit)
code = launch.launch()
print("preview:", seen)
sys.exit(code if seen else 3)
"""


@pytest.mark.gui
@pytest.mark.slow
def test_the_window_with_a_two_thread_pool_computes_its_preview_and_survives(tmp_path):
    """On torch 2.8/2.9 this crashed with SIGSEGV while the old preview imported torch on a pool thread."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", CRASH_PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert "preview: ['seed']" in proc.stdout
