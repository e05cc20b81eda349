"""Closing the window: a running compile or sweep is cancelled first (when the user agrees), and the window closes
once it has ended; the settings are saved unless another window has the workdir first."""

from __future__ import annotations

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMessageBox

from neffbench.gui.shell import panels as window_panels
from neffbench.gui.shell import warm_server


def close_event(window, event: QCloseEvent) -> None:
    if window.panels_ready:
        window_panels.cancel_runs(window)  # a benchmark or a compare is not worth keeping the window for
    if window.panels_ready and window.busy:
        if not window.close_when_idle:
            answer = QMessageBox.question(
                window, "Compile running", "A compile or sweep is running. Cancel it and quit?"
            )
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
            window.close_when_idle = True
            window.cancel()
            window.panels.sweeps.cancel()
        event.ignore()  # closes when the controller reports the job has ended
        return
    if window.presence.first:  # a second window on the workdir leaves the first's settings be
        window.save_settings()
    window.presence.release()
    from neffbench.probe.client import close_shared

    close_shared()  # the warm probe, if Resolve or a CPU check started one
    warm_server.stop(window)
    event.accept()
