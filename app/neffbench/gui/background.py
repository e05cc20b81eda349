"""The window's work off the GUI thread, on Python threads only; results come back as signals on the GUI thread.

torch must never run on a thread that Python did not create: on torch 2.8 and 2.9 its one-time set-up
segfaults there (pytorch/pytorch#150548), and QThreadPool's and QThread's threads are Qt's. Which
background job first touches torch is a matter of timing (a scan, the toolchain check, the preview), so
every one of them runs here, on a ``concurrent.futures`` pool, and none on a Qt thread
(tests/test_gui_threads.py keeps it so). superqt stays for what it does well, debouncing and throttling.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

log = logging.getLogger(__name__)

# Short jobs (the preview, scans, the toolchain check) share these threads; two cores must not mean two at a time.
MAX_THREADS = 4

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
# Each started Task until its last signal has been delivered: Qt must not lose the object it queues them on.
_alive: set[Task] = set()
_futures: set[concurrent.futures.Future] = set()


class Task(QObject):
    """One call on a background thread. Made on the GUI thread and living there, so what its signals are
    connected to runs on the GUI thread; ``finished`` comes last, after ``returned`` or ``errored``."""

    returned = Signal(object)
    errored = Signal(object)  # the exception
    finished = Signal()

    def __init__(self, func: Callable[..., Any], args: tuple, kwargs: dict):
        super().__init__()
        self._call = (func, args, kwargs)
        self.done = False
        self.finished.connect(self._on_finished)

    def _run(self) -> None:  # on a pool thread
        func, args, kwargs = self._call
        try:
            result = func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the GUI thread, which says what failed
            self.errored.emit(exc)
        else:
            self.returned.emit(result)
        finally:
            self.finished.emit()

    def _on_finished(self) -> None:  # on the GUI thread, so the last reference goes there too
        self.done = True
        # Not now: dropping the last reference inside this emission deletes the task before the slots
        # connected after this one have run.
        QTimer.singleShot(0, lambda: _alive.discard(self))


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="neffbench-bg")
        return _pool


def _raise(exc: BaseException) -> None:
    # Nobody asked to hear of failures: raise on the GUI thread, where Qt reports it (and pytest-qt fails the test).
    raise exc


def start(func: Callable[..., Any], *args: Any, returned: Callable[[Any], None] | None = None,
          errored: Callable[[BaseException], None] | None = None, finished: Callable[[], None] | None = None,
          **kwargs: Any) -> Task:
    """Call ``func(*args, **kwargs)`` on a Python thread; ``returned(result)`` or ``errored(exc)``, then
    ``finished()``, run on the GUI thread. Call it from the GUI thread. The task is kept until it has reported.
    Connect here, not to the task afterwards: a quick call may have reported before a later ``connect``."""
    task = Task(func, args, kwargs)
    if returned is not None:
        task.returned.connect(returned)
    task.errored.connect(errored if errored is not None else _raise)
    if finished is not None:
        task.finished.connect(finished)
    _alive.add(task)
    future = _executor().submit(task._run)
    _futures.add(future)
    future.add_done_callback(_futures.discard)
    return task


def running() -> int:
    """How many started tasks have not reported yet."""
    return sum(not task.done for task in _alive)


def wait(timeout_s: float) -> bool:
    """Block until the running calls have returned (at the window's end); False if some still run after ``timeout_s``."""
    _, not_done = concurrent.futures.wait(list(_futures), timeout=timeout_s)
    return not not_done
