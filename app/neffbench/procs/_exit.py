"""Ending a process as the interpreter's exit would, less the teardown of every module and object.

With torch loaded that teardown takes a third of a CPU-second, and in a process forked from the warm-start server
it also copies every page it touches out of the memory shared with the server. Nothing of ours is left to it: the
files a worker or a command writes are closed by the blocks that wrote them, and the standard streams are flushed
here.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int, *, exit_functions: bool) -> NoReturn:
    """End this process with ``code``, its standard streams flushed, without the teardown.

    With ``exit_functions`` (a command's end), first what the interpreter's exit does first: threading's exit
    callbacks (executors told to stop) and a join of every other non-daemon thread, then the exit functions
    (logging's flush, temporary folders' removal). A worker goes without: its job is done and written, and a
    thread of its own may still be blocked reading its stdin.
    """
    try:
        if exit_functions:
            shutdown = getattr(threading, "_shutdown", None)  # only the main thread may take this step
            if shutdown is not None and threading.current_thread() is threading.main_thread():
                shutdown()
            atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone, or a stream closed by the program itself
                pass
        os._exit(code)
