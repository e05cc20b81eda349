"""The window's collector (neffbench.gui.shell.gc_guard): on the GUI thread, and an older generation only when due."""

from __future__ import annotations

import gc

import pytest


@pytest.mark.parametrize(
    ("counts", "collected"),
    [
        ((10, 50, 50), []),  # the young generation is not due: nothing runs, whatever the older counts
        ((701, 3, 0), [0]),
        ((701, 11, 0), [1]),  # the middle one is due: not the whole heap
        ((701, 11, 11), [2]),
        ((701, 3, 11), [0]),  # the oldest is reached only through the middle one, as in CPython
    ],
)
def test_a_tick_collects_the_generation_the_counts_make_due(qapp, monkeypatch, counts, collected):
    from neffbench.gui.shell.gc_guard import MainThreadGC

    was_enabled = gc.isenabled()
    collector = MainThreadGC(interval_ms=60_000)
    try:
        assert not gc.isenabled()
        calls: list[int] = []
        monkeypatch.setattr(gc, "get_threshold", lambda: (700, 10, 10))
        monkeypatch.setattr(gc, "get_count", lambda: counts)
        monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(generation) or 0)
        collector._threshold = 700
        collector._on_timer_timeout()
        assert calls == collected
    finally:
        monkeypatch.undo()
        collector.stop()
        if not was_enabled:
            gc.disable()
