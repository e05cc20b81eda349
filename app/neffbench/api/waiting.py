"""Waiting for work the caller can stop with Ctrl-C: the work ends cleanly (its job or run recorded as cancelled,
nothing left running) and then KeyboardInterrupt reaches the caller, as from any Python call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from neffbench.jobs.cancellable import run_cancellable

T = TypeVar("T")


def waited(work: Callable[[], T], cancel: Callable[[], Any], *, name: str, say: Callable[[str], None]) -> T:
    """``work()``'s result; on Ctrl-C ``cancel()`` is called once, ``work`` is let finish, then KeyboardInterrupt."""
    stop = threading.Event()
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            failure.append(exc)

    def announce() -> None:
        say("neffbench: cancelling (Ctrl-C): the job's processes get SIGTERM, then SIGKILL after a grace period")
        cancel()

    run_cancellable(run, stop, name=name, announce=announce)
    if failure:
        raise failure[0]
    if stop.is_set():
        raise KeyboardInterrupt
    return result[0]
