"""Cancel (Esc): one action for what is running, a compile, a sweep or a benchmark.

Two actions cannot share Esc (Qt would call the key ambiguous and trigger neither), so the one Cancel action
stops the work in view: on the Run tab the benchmark, elsewhere the compile or sweep, and the benchmark when
nothing else runs. The action is enabled while any of them can still be cancelled.
"""

from __future__ import annotations

from neffbench.gui.shell.tabs import RUN_TAB


def _compiling(window) -> bool:
    """A compile or a sweep runs that has not been asked to stop yet."""
    compiles, sweep = window.controllers.compile, window.panels.sweeps.controller
    return (compiles.is_running and not compiles.is_cancelling) or (sweep.is_running and not sweep.cancelling)


def _benchmarking(window) -> bool:
    runs = window.controllers.run
    return runs.is_running and not runs.is_cancelling


def triggered(window) -> None:
    """Cancel's action: the benchmark when it is the work in view (or the only work), else the compile or sweep."""
    if not window.panels_ready:
        return
    if _benchmarking(window) and (window.tabs.currentIndex() == RUN_TAB or not _compiling(window)):
        window.panels.run.cancel()  # as its Cancel button: the record says how far the run got
    else:
        window.cancel()
        window.panels.sweeps.cancel()
    sync(window)


def sync(window, *_args) -> None:
    """Cancel enabled while something can be cancelled, its tooltip naming what Esc would stop."""
    compiling, benchmarking = _compiling(window), _benchmarking(window)
    action = window.cancel_action
    action.setEnabled(compiling or benchmarking)
    if benchmarking and (window.tabs.currentIndex() == RUN_TAB or not compiling):
        tip = "Stop the running benchmark (Esc); its timed iterations so far are kept"
    else:
        tip = "Stop the running compile or sweep (Esc)"
    action.setToolTip(tip)
    action.setStatusTip(tip)


def install(window) -> None:
    """Keep Cancel in step with the compile, sweep and run controllers and with the tab in view (their own
    slots run first: these connections are made after theirs)."""
    runs, ctl, sweeps = window.controllers.run, window.controllers.compile, window.panels.sweeps.controller
    for signal in (runs.started, runs.finished, runs.failed, runs.status_changed, ctl.started, ctl.finished):
        signal.connect(lambda *_a: sync(window))
    for signal in (sweeps.started, sweeps.finished, window.tabs.currentChanged):
        signal.connect(lambda *_a: sync(window))
