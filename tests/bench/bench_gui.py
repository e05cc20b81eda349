"""Workbench figures, each beside its baseline from the same run: start-up to first paint and to the first preview,
preview recompute, and log ingestion. Figures for the README, not pass/fail tests."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

STARTUP_RUNS = 5
LOG_LINES = 1_000_000
NAIVE_TIME_LIMIT_S = 10.0
STALL_TICK_MS = 5

_FIRST_PAINT = """
class First(QObject):
    # The first paint of any widget in the window: the same measure for both windows.
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and isinstance(obj, QWidget) and obj.window() is window:
            app.removeEventFilter(self)
            print(time.time(), flush=True)
            app.quit()
        return False
first = First()
app.installEventFilter(first)
window.show()
app.exec()
"""

_WORKBENCH = (
    """
import sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget
from neffbench.gui.shell.launch import make_app
app = make_app(["neffbench"])
from neffbench.gui.shell.main_window import MainWindow, app_icon
from neffbench.gui.shell.settings import Settings
app.setWindowIcon(app_icon())
window = MainWindow(Settings.at(sys.argv[1]), defer_panels=True)  # as launch() opens it
"""
    + _FIRST_PAINT
)

_BARE = (
    """
import sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget
import pyqtgraph as pg
app = QApplication(["bare"])
window = QMainWindow()
window.setCentralWidget(pg.PlotWidget())
window.resize(1500, 940)
"""
    + _FIRST_PAINT
)


# Process start to the first preview's plots painted, as launch() opens the window (the warm probe started first).
_TO_PREVIEW = """
import sys, time
from neffbench.probe.client import shared
shared().start()
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget
from neffbench.gui.shell.launch import make_app
app = make_app(["neffbench"])
from neffbench.gui.shell.main_window import MainWindow, app_icon
from neffbench.gui.shell.settings import Settings
app.setWindowIcon(app_icon())
window = MainWindow(Settings.at(sys.argv[1]), defer_panels=True)
computed = []
window.preview_controller.computed.connect(lambda p: computed.append(p))
class Painted(QObject):
    # The first paint inside the preview's plots after the preview came.
    def eventFilter(self, obj, event):
        if computed and event.type() == QEvent.Type.Paint and isinstance(obj, QWidget) and obj.window() is window:
            if window.preview_stack is not None and window.preview_stack.isAncestorOf(obj):
                app.removeEventFilter(self)
                print(time.time(), flush=True)
                QTimer.singleShot(0, window.close)
        return False
painted = Painted()
app.installEventFilter(painted)
window.show()
app.exec()
shared().close()
"""
BUSY = "while True: pass"


def _first_paint_s(script: str, tmp: Path) -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": _platform()}
    settings = tmp / f"settings-{time.monotonic_ns()}.ini"
    start = time.time()
    out = subprocess.run(
        [sys.executable, "-c", script, str(settings)], capture_output=True, text=True, env=env, timeout=120, check=True
    ).stdout
    return float(out.strip().splitlines()[-1]) - start


def _to_preview_s(tmp: Path, busy: int) -> float:
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
    try:
        return _first_paint_s(_TO_PREVIEW, tmp)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


_IMPORT_TORCH = "import time; import torch; print(time.time(), flush=True)"


def _import_torch_s() -> float:
    start = time.time()
    out = subprocess.run([sys.executable, "-c", _IMPORT_TORCH], capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1]) - start


def startup_to_preview() -> list[str]:
    """Process start to the preview painted, fresh settings each time, quiet and with two busy processes, beside
    a bare ``import torch`` (the floor: the preview needs the kernel's torch code)."""
    with tempfile.TemporaryDirectory() as tmp:
        quiet, torch_alone = [], []
        for _ in range(STARTUP_RUNS):  # interleaved, so both see the same machine
            quiet.append(_to_preview_s(Path(tmp), 0))
            torch_alone.append(_import_torch_s())
        busy = [_to_preview_s(Path(tmp), 2) for _ in range(STARTUP_RUNS)]
    q, b, t = statistics.median(quiet), statistics.median(busy), statistics.median(torch_alone)
    return [
        f"| start-up: process start to the first preview's plots painted (median of {STARTUP_RUNS}, fresh settings) "
        "| seconds | target |",
        "|---|---|---|",
        f"| quiet machine | {q:.3f} (min {min(quiet):.3f}, max {max(quiet):.3f}) | 1.5 |",
        f"| two busy processes beside it | {b:.3f} (min {min(busy):.3f}, max {max(busy):.3f}) | 3.0 |",
        f"| baseline: `python -c 'import torch'` alone, quiet | {t:.3f} | |",
        "",
        f"Machine: {os.cpu_count()} CPUs. The warm probe, started first, imports torch and computes the preview while "
        "the window starts; the other tabs, the toolchain check, the workdir scan and the window's own torch import "
        "start after the preview is drawn.",
    ]


def startup() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        bare, bench = [], []
        for _ in range(STARTUP_RUNS):  # interleaved, so both see the same machine
            bare.append(_first_paint_s(_BARE, Path(tmp)))
            bench.append(_first_paint_s(_WORKBENCH, Path(tmp)))
    b, w = statistics.median(bare), statistics.median(bench)
    return [
        f"| start-up: process start to first painted window (median of {STARTUP_RUNS}, Qt platform "
        f"`{_platform()}`) | seconds |",
        "|---|---|",
        f"| bare PySide6 + pyqtgraph window (baseline) | {b:.3f} |",
        f"| NEFF Workbench window | {w:.3f} |",
        f"| ratio (target at most 1.5x) | {w / b:.2f}x |",
        "",
        "torch is not imported before the first paint; it loads in the background afterwards.",
    ]


class _StallMeter:
    """The longest gap between ticks of a 5 ms timer on the GUI thread, minus the 5 ms."""

    def __init__(self):
        from PySide6.QtCore import QTimer

        self.worst = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(STALL_TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        self._timer.stop()
        self._on_timer_timeout()  # a stall still going on when the run ended counts too
        return self.worst * 1e3

    def _on_timer_timeout(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self._last - STALL_TICK_MS / 1e3)
        self._last = now


def _app():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["bench"])
    from neffbench.gui.widgets import theme

    theme.apply(app)
    return app


def _run_until(app, done, limit_s: float) -> bool:
    from PySide6.QtCore import QTimer

    deadline = time.perf_counter() + limit_s
    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(lambda: (done() or time.perf_counter() > deadline) and app.quit())
    timer.start()
    app.exec()
    timer.stop()
    return bool(done())


def preview() -> list[str]:
    import dataclasses

    from neffbench.kernels.rope import preview as core
    from neffbench.kernels.rope.build import rope_scaling
    from neffbench.kernels.rope.ops import build_cos_sin_cache
    from neffbench.presets import load_preset

    app = _app()
    from neffbench.gui.preview.controller import PreviewController
    from neffbench.kernels.rope.gui.panel import RopePreviewPanel

    seed, llama = load_preset("seed"), load_preset("llama3.1-8b")
    llama_bf16 = dataclasses.replace(llama, rope=dataclasses.replace(llama.rope, cache_dtype="bfloat16"))

    def timed(fn, runs=5) -> float:
        values = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            values.append(time.perf_counter() - t)
        return statistics.median(values) * 1e3

    kernel = timed(lambda: build_cos_sin_cache(128, 131072, 500000.0, rope_scaling(llama)))
    rows = []
    for label, spec in (
        ("seed", seed),
        ("Llama-3.1-8B, 131072 positions", llama),
        ("Llama-3.1-8B, bfloat16 cache", llama_bf16),
    ):
        cold = timed(lambda spec=spec: (core.clear_cache(), core.compute(spec)))
        core.compute(spec)
        warm = timed(
            lambda spec=spec: core.compute(
                dataclasses.replace(spec, model=dataclasses.replace(spec.model, num_heads_q=spec.model.num_heads_q))
            )
        )
        rows.append((label, cold, warm))

    # End to end in the GUI: request -> worker -> plots updated, with the event loop measured meanwhile.
    controller = PreviewController(debounce_ms=0)
    panel = RopePreviewPanel()
    panel.resize(1400, 900)
    panel.show()
    shown = []
    controller.computed.connect(lambda p: (panel.show_preview(p), shown.append(time.perf_counter())))
    controller.load_torch()
    _run_until(app, lambda: controller.is_ready, 60)
    gui_rows = []
    for label, spec in (("seed", seed), ("Llama-3.1-8B, 131072 positions", llama)):
        core.clear_cache()
        meter = _StallMeter()
        meter.start()
        shown.clear()
        start = time.perf_counter()
        controller.request(spec)
        _run_until(app, lambda: bool(shown), 60)
        gui_rows.append((label, (shown[0] - start) * 1e3, meter.stop()))
    panel.close()
    lines = [
        "| preview recompute (median of 5, ms) | cold: new table | warm: table reused |",
        "|---|---|---|",
    ]
    lines += [f"| {label} | {cold:.1f} | {warm:.1f} |" for label, cold, warm in rows]
    lines += [
        f"| baseline: the kernel's build_cos_sin_cache alone, 131072 x 128 | {kernel:.1f} | |",
        "",
        "| in the window: form change to plots updated (cold) | ms | longest GUI-thread stall, ms |",
        "|---|---|---|",
    ]
    lines += [f"| {label} | {total:.1f} | {stall:.1f} |" for label, total, stall in gui_rows]
    lines += [
        "",
        "Targets: Llama-3.1-8B under 100 ms; the GUI thread never blocked longer than 50 ms. "
        f"Machine: {os.cpu_count()} CPUs.",
    ]
    return lines


def _compiler_lines(n: int) -> list[str]:
    levels = ["INFO"] * 16 + ["DEBUG"] * 3 + ["WARNING", "USER"]
    out = []
    for i in range(n):
        level = levels[i % len(levels)]
        if i % 50_000 == 49_999:
            out.append(f"2024-12-04T01:01:23Z ERROR 10200 [root/Tensorizer]: [TEN404] tensor {i} has no layout")
        else:
            out.append(
                f"2024-12-04T01:01:23Z {level} 10200 [sg0000/Tensorizer/Pass{i % 97}]: step {i} of the pass "
                f"finished in {i % 1000 / 10:.1f} ms"
            )
    return out


def _ingest(app, view_append, view_done, lines: list[str], limit_s: float) -> tuple[float, float, int, bool]:
    """Feed lines as the compile controller does: a producer thread appends to a LineBuffer, a 50 ms
    timer on the GUI thread hands batches to the view."""
    from PySide6.QtCore import QTimer

    from neffbench.gui.widgets.threaded import LINE_FLUSH_MS, LineBuffer

    buffer = LineBuffer()
    delivered = [0]

    def produce() -> None:
        # As the runner's thread does: lines one by one to on_line, with a GIL-releasing pipe read
        # (os.read of up to 64 KiB, about 700 of these lines) between chunks.
        for start in range(0, len(lines), 700):
            for line in lines[start : start + 700]:
                buffer.append(line)
            time.sleep(0)

    def flush() -> None:
        batch = buffer.take()
        if batch:
            delivered[0] += len(batch)
            view_append(batch)

    flusher = QTimer()
    flusher.setInterval(LINE_FLUSH_MS)
    flusher.timeout.connect(flush)
    meter = _StallMeter()
    producer = threading.Thread(target=produce, daemon=True)
    start = time.perf_counter()
    meter.start()
    flusher.start()
    producer.start()
    finished = _run_until(app, lambda: delivered[0] == len(lines) and view_done(), limit_s)
    elapsed = time.perf_counter() - start
    flusher.stop()
    stall = meter.stop()
    producer.join()
    return elapsed, stall, delivered[0], finished


def log_ingestion() -> list[str]:
    import gc
    import html

    from PySide6.QtWidgets import QPlainTextEdit

    from neffbench.compilerlog.lines import parse_line
    from neffbench.gui.compile.log_view import MAX_LINES, LogView
    from neffbench.gui.widgets import theme

    app = _app()
    lines = _compiler_lines(LOG_LINES)
    gc.freeze()  # as the window does once torch has loaded: start-up objects are not collected again

    view = LogView()
    view.resize(1000, 600)
    view.show()
    fast = _ingest(app, view.append_lines, lambda: view.pending == 0, lines, 60)
    last_ok = view.text.document().lastBlock().text() == lines[-1]
    skipped = view.skipped
    view.close()

    naive = QPlainTextEdit(readOnly=True)
    naive.setMaximumBlockCount(MAX_LINES)
    naive.resize(1000, 600)
    naive.show()
    shown = [0]

    naive_deadline = [0.0]

    def naive_append(batch: list[str]) -> None:
        if not naive_deadline[0]:
            naive_deadline[0] = time.perf_counter() + NAIVE_TIME_LIMIT_S
        for line in batch:  # one coloured HTML append per line, the pattern napari's log pane uses
            if time.perf_counter() > naive_deadline[0]:
                return
            colour = theme.LEVEL_COLOURS.get(parse_line(line).level or "INFO") or "#000000"
            naive.appendHtml(f'<span style="color:{colour}">{html.escape(line)}</span>')
            shown[0] += 1

    slow = _ingest(app, naive_append, lambda: shown[0] == len(lines), lines, NAIVE_TIME_LIMIT_S)
    naive.close()

    def row(label: str, result, count: int) -> str:
        elapsed, stall, delivered, finished = result
        rate = count / elapsed
        status = f"{elapsed:.2f}" if finished else f"did not finish: {count:,} lines shown in {elapsed:.1f}"
        return f"| {label} | {status} | {rate:,.0f} | {stall:.0f} |"

    return [
        f"| log ingestion of {LOG_LINES:,} compiler lines | seconds | lines/s | longest event-loop stall, ms |",
        "|---|---|---|---|",
        row("naive: one coloured append per line (baseline)", slow, shown[0]),
        row(f"LogView: queued, time-boxed batches, capped at {MAX_LINES:,} lines", fast, LOG_LINES),
        "",
        f"Targets: all lines in under 2 s with no stall over 50 ms. The LogView showed the last line: {last_ok}; "
        f"{skipped:,} lines arrived faster than it could show them and were skipped in the view (job.log has them).",
        "Lines come from a thread as the runner delivers them: one on_line call per line, a GIL-releasing pipe "
        "read every ~700 lines, handed to the GUI every 50 ms.",
    ]


def _platform() -> str:
    """xcb on an X display (make bench starts Xvfb: the window as users see it locally, over ssh -X or VNC), else
    offscreen, which paints nothing to a server and so starts faster than any real window."""
    return os.environ.get("QT_QPA_PLATFORM") or ("xcb" if os.environ.get("DISPLAY") else "offscreen")


def run() -> list[str]:
    os.environ["QT_QPA_PLATFORM"] = _platform()
    out: list[str] = []
    for section in (startup, startup_to_preview, preview, log_ingestion):
        out += section()
        out.append("")
    return out


if __name__ == "__main__":
    print("\n".join(run()))
