"""Work counted instead of timed: how many calls (Python functions and C builtins) a piece of code makes."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable


def calls_made(fn: Callable[[], object]) -> int:
    """The function and builtin calls ``fn()`` makes, itself included: the same on a busy machine as on an idle one."""
    count = 0

    def profile(_frame, event: str, _arg) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    # A garbage collection falling inside fn() would count the finalizers and callbacks it runs: off meanwhile.
    collecting = gc.isenabled()
    gc.disable()
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(previous)
        if collecting:
            gc.enable()
    return count
