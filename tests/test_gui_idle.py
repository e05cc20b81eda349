"""An idle window paints nothing: over ``ssh -X`` or VNC every repaint is pixels sent across the link."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.gui

QUIET_S = 0.5
WATCH_MS = 1500
WATCHES = 3


class _PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.painted: list[str] = []
        self.last = time.monotonic()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.painted.append(type(watched).__name__)
            self.last = time.monotonic()
        return False


@pytest.fixture
def forwarded(monkeypatch):
    """The window as ``ssh -X`` starts it (the flash time is the application's: put back afterwards)."""
    from neffbench.gui.shell.launch import keep_still_if_remote

    app = QApplication.instance()
    flash = app.styleHints().cursorFlashTime()
    monkeypatch.setenv("DISPLAY", "localhost:10.0")
    keep_still_if_remote(app)
    yield
    app.styleHints().setCursorFlashTime(flash)


def test_the_idle_window_with_its_preview_shown_does_not_repaint(forwarded, window, qtbot):
    with qtbot.waitSignal(window.preview_controller.computed, timeout=60_000):
        window.preview_controller.load_torch()
    window.activateWindow()
    window.form.editor("name").widget.setFocus()  # where a blinking caret would repaint twice a second
    # A status message that times out repaints once: wait for it to go.
    qtbot.waitUntil(lambda: not window.statusBar().currentMessage(), timeout=20_000)
    counter = _PaintCounter()
    app = QApplication.instance()
    app.installEventFilter(counter)
    seen: list[list[str]] = []
    try:
        # Whatever the preview's arrival asked to be painted, then a quiet spell, then watch. A paint that a loaded
        # machine delayed into a watch comes once; a repaint of an idle window (a caret, an animation) comes in
        # every watch: so one quiet watch of WATCHES passes.
        for _ in range(WATCHES):
            qtbot.waitUntil(lambda: time.monotonic() - counter.last > QUIET_S, timeout=20_000)
            counter.painted.clear()
            watch = QTimer()
            watch.setSingleShot(True)
            with qtbot.waitSignal(watch.timeout, timeout=WATCH_MS + 5_000):
                watch.start(WATCH_MS)
            seen.append(list(counter.painted))
            if not counter.painted:
                break
    finally:
        app.removeEventFilter(counter)
    assert [] in seen, f"painted while idle, in each of {WATCHES} watches: {[sorted(set(p)) for p in seen]}"
