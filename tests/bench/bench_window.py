"""The window's making, in CPU seconds: the window with every tab built (as the tests make it, and as it starts once
the first preview is drawn), and what the first show of the Run, Numerics and Sweeps tabs adds (their plots, made
when first needed), beside a baseline from the same run: as many plots as the window then shows, made as pyqtgraph
makes them. Figures for the README, not pass/fail tests."""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

ROUNDS = 7


def _app():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["bench"])
    from neffbench.gui.widgets import theme

    theme.apply(app)
    theme.configure_plots()
    return app


def _cpu(fn, *args):
    """The CPU seconds ``fn(*args)`` took, and what it returned."""
    start = time.process_time()
    result = fn(*args)
    return time.process_time() - start, result


def _show_tabs(app, window, tabs: tuple[int, ...]) -> None:
    for tab in tabs:
        window.tabs.setCurrentIndex(tab)
        app.processEvents()


def _rounds(tmp: Path) -> tuple[list[float], list[float], list[float], int]:
    import pyqtgraph as pg

    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings
    from neffbench.gui.shell.tabs import NUMERICS_TAB, RUN_TAB, SWEEPS_TAB

    app = _app()
    built, shown, baseline, plots = [], [], [], 0
    for n in range(ROUNDS + 1):  # the first warms up: imports, fonts, pyqtgraph's caches
        build, window = _cpu(lambda settings: MainWindow(settings, background=False), Settings.at(tmp / f"{n}.ini"))
        window.show()
        app.processEvents()
        show, _ = _cpu(_show_tabs, app, window, (RUN_TAB, NUMERICS_TAB, SWEEPS_TAB))
        views = window.findChildren(pg.GraphicsView)
        plots = sum(isinstance(item, pg.PlotItem) for view in views for item in view.scene().items())
        plain, kept = _cpu(lambda count: [pg.PlotWidget() for _ in range(count)], plots)
        window.close()
        for widget in (window, *kept):
            widget.deleteLater()
        app.processEvents()
        gc.collect()
        if n:
            built.append(build)
            shown.append(show)
            baseline.append(plain)
    return built, shown, baseline, plots


def run() -> list[str]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as tmp:
        built, shown, baseline, plots = _rounds(Path(tmp))

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f})"

    return [
        f"| window making (median of {ROUNDS}, Qt platform `{os.environ['QT_QPA_PLATFORM']}`) | CPU seconds |",
        "|---|---|",
        f"| the window with every tab built | {cell(built)} |",
        f"| first show of the Run, Numerics and Sweeps tabs (their plots made) | {cell(shown)} |",
        f"| baseline: {plots} pyqtgraph PlotWidgets (as many plots as the window then shows) | {cell(baseline)} |",
        "",
        f"Machine: {os.cpu_count()} CPUs. A plot's right-click menu is made on the first right-click; the plots of "
        "a tab not shown yet are made on its first show or its first data.",
    ]


if __name__ == "__main__":
    print("\n".join(run()))
