"""The window's work off the GUI thread, on Python threads only; results are handed to the GUI thread.

torch must never run on a thread that Python did not create: on torch 2.8 and 2.9 its one-time set-up
segfaults there (pytorch/pytorch#150548), and QThreadPool's and QThread's threads are Qt's. Which
background job first touches torch is a matter of timing (a scan, the toolchain check, the preview), so
every one of them runs here, on a Python thread of its own, and none on a Qt thread
(tests/test_gui_threads.py keeps it so). superqt stays for what it does well, debouncing and throttling.

Results come back through a queue that a timer on the GUI thread empties while calls are under way:
the worker thread touches no Qt object at all, so no QObject can be deleted from it or while it emits.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer

# How often the GUI thread looks for results while calls are under way: well under a debounce or a frame.
POLL_MS = 15

# Each started Task until it has reported.
_alive: set[Task] = set()


class Task:
    """One call on a background thread; its callbacks run on the GUI thread, ``finished`` last."""

    def __init__(self, func: Callable[..., Any], args: tuple, kwargs: dict, callbacks: dict[str, Any]):
        self._call = (func, args, kwargs)
        self._callbacks = callbacks
        self.done = False
        # Not a daemon: torch cut off in the middle by the interpreter's exit can crash it.
        self.thread = threading.Thread(target=self._run, name=f"neffbench-{getattr(func, '__name__', 'call')}")

    def _run(self) -> None:  # on its thread
        func, args, kwargs = self._call
        try:
            outcome = ("returned", func(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to the GUI thread, which says what failed
            outcome = ("errored", exc)
        _hub().results.put((self, *outcome))

    def _report(self, kind: str, value: Any) -> None:  # on the GUI thread
        self.done = True
        _alive.discard(self)
        if kind == "errored" and "errored" not in self._callbacks:
            raise value  # nobody asked to hear of it: Qt reports it (and pytest-qt fails the test)
        try:
            callback = self._callbacks.get(kind)
            owner = _owner(callback)
            # Its widget went first: dropped, as Qt drops a connection whose receiver is gone.
            if callback is not None and not (isinstance(owner, QObject) and not shiboken6.isValid(owner)):
                callback(value)
        finally:
            # Bookkeeping (a count of loads under way): called even when its widget has gone, so it must
            # touch no widget.
            if "finished" in self._callbacks:
                self._callbacks["finished"]()


def _owner(callback: Any) -> Any:
    """The object a callback is a method of, through partials: pass methods (or partials of them), not
    closures, for a widget's results, so that they can be dropped once it has gone."""
    while isinstance(callback, functools.partial):
        callback = callback.func
    return getattr(callback, "__self__", None)


class _Hub(QObject):
    """Lives on the GUI thread as long as the application; its timer hands finished calls to their callbacks."""

    def __init__(self) -> None:
        super().__init__(QCoreApplication.instance())
        self.results: queue.SimpleQueue = queue.SimpleQueue()
        self._polling = False

    def poll(self) -> None:
        if not self._polling:
            self._polling = True
            self._tick_soon()

    def _tick_soon(self) -> None:
        QTimer.singleShot(POLL_MS, self, self._tick)

    def _tick(self) -> None:
        try:
            while True:
                try:
                    task, kind, value = self.results.get_nowait()
                except queue.Empty:
                    break
                task._report(kind, value)  # a callback that raises leaves the rest for the next tick
        finally:
            if _alive:
                self._tick_soon()
            else:
                self._polling = False


_the_hub: _Hub | None = None


def _hub() -> _Hub:
    global _the_hub
    if _the_hub is None:
        _the_hub = _Hub()
    return _the_hub


def start(
    func: Callable[..., Any],
    *args: Any,
    returned: Callable[[Any], None] | None = None,
    errored: Callable[[Exception], None] | None = None,
    finished: Callable[[], None] | None = None,
    **kwargs: Any,
) -> Task:
    """Call ``func(*args, **kwargs)`` on a Python thread; ``returned(result)`` or ``errored(exc)``, then
    ``finished()``, run on the GUI thread. Call it from the GUI thread. ``returned`` and ``errored`` are
    dropped when the widget whose methods they are has been deleted; ``finished`` is not (keep it to
    bookkeeping)."""
    hub = _hub()  # made here, on the GUI thread
    callbacks = {k: v for k, v in (("returned", returned), ("errored", errored), ("finished", finished)) if v}
    task = Task(func, args, kwargs, callbacks)
    _alive.add(task)
    hub.poll()
    task.thread.start()
    return task


def running() -> int:
    """How many started calls have not reported yet."""
    return len(_alive)


def wait(timeout_s: float) -> bool:
    """Block until the running calls have returned (at the window's end); False if some still run after ``timeout_s``."""
    import time

    deadline = time.monotonic() + timeout_s
    for task in list(_alive):
        task.thread.join(max(0.0, deadline - time.monotonic()))
    return not any(task.thread.is_alive() for task in _alive)
