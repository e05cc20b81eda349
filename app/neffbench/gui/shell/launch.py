"""Start the Qt application and show the workbench window; torch and the toolchain check load after it is up."""

from __future__ import annotations

import os
import sys

DESKTOP_FILE = "neffbench"  # packaging/neffbench.desktop: lets the desktop match the window to its launcher


# PySide6 6.12.0 drops a reference to None on every void call on Python < 3.12 (None is immortal from
# 3.12), which ends a session in "Fatal Python error: none_dealloc" after some minutes of use.
_BROKEN_ON_PY311 = ("6.12.0",)


def make_app(argv: list[str] | None = None):
    import PySide6
    from PySide6.QtWidgets import QApplication

    if sys.version_info < (3, 12) and PySide6.__version__ in _BROKEN_ON_PY311:
        print(
            f"neffbench: PySide6 {PySide6.__version__} crashes on Python {sys.version.split()[0]} after a while "
            "(it loses references to None); install another PySide6-Essentials, e.g. 6.11.3.",
            file=sys.stderr,
        )

    from neffbench import __version__
    from neffbench.remote.display import apply_qt_environment

    # Before Qt connects: over ssh -X its shared-memory images and GLX would fail, and the variables
    # must be set before QApplication reads them.
    apply_qt_environment()

    from neffbench.gui.shell.settings import APPLICATION, ORGANIZATION
    from neffbench.gui.widgets import theme

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    assert isinstance(app, QApplication)  # the window's widgets need one
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APPLICATION)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(DESKTOP_FILE)
    theme.apply(app)
    keep_still_if_remote(app)
    return app


def keep_still_if_remote(app) -> None:
    """A blinking caret repaints twice a second forever; over ssh -X or VNC each blink crosses the link."""
    from neffbench.remote.display import repaints_cross_a_network

    if repaints_cross_a_network(os.environ):
        app.styleHints().setCursorFlashTime(0)


def _fill_screen_if_asked(app, window) -> None:
    from neffbench.remote.display import FILL_SCREEN_ENV

    screen = app.primaryScreen()
    if os.environ.get(FILL_SCREEN_ENV) and screen is not None:
        window.setGeometry(screen.availableGeometry())
        # Without a window manager nothing gives the window the keyboard: it takes it (Ctrl+Q, typing).
        window.activateWindow()


def launch(argv: list[str] | None = None) -> int:
    # First of all, the warm probe: its torch import (a second or more) runs on another core while Qt starts
    # and the window builds, and it computes the first preview (neffbench.gui.preview.controller).
    from neffbench.probe.client import shared

    shared().start()
    app = make_app(argv)
    from neffbench.gui.shell.gc_guard import MainThreadGC
    from neffbench.gui.shell.main_window import MainWindow, app_icon
    from neffbench.gui.widgets import background

    collector = MainThreadGC(parent=app)  # torch loads on a worker thread: no collection may run there
    app.setWindowIcon(app_icon())
    # Short jobs (preview, scans, the toolchain probe) run on background.py's Python threads, never on
    # QThreadPool's: torch 2.8/2.9 segfault on a thread Python did not create.
    window = MainWindow(defer_panels=True)
    window.show()
    _fill_screen_if_asked(app, window)
    code = app.exec()
    # Background reads (a scan, the toolchain probe) may still be running: give them a moment.
    background.wait(3.0)
    # Delete the window while the application still exists: left to interpreter shutdown, the order is
    # arbitrary and pyqtgraph's items can outlive QApplication and crash on the way out.
    import shiboken6

    shiboken6.delete(window)
    collector.stop()
    return code
