"""Blocking work on a thread that Ctrl-C cancels instead of interrupting, so every job ends and is recorded."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable


def run_cancellable(
    work: Callable[[], None], cancel: threading.Event, *, name: str, announce: Callable[[], None]
) -> None:
    """Run ``work`` on a thread until it returns. Ctrl-C only sets ``cancel`` (``announce`` says so, once):
    the work notices and ends its jobs cleanly, and a KeyboardInterrupt inside Thread.join, which can
    corrupt the thread's state, never happens."""
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: cancel.set()) if on_main else None
    worker = threading.Thread(target=work, name=name)
    worker.start()
    announced = False
    try:
        while worker.is_alive():
            worker.join(0.2)
            if cancel.is_set() and not announced:
                announced = True
                announce()
    finally:
        if on_main:
            signal.signal(signal.SIGINT, previous)
