"""The steps inside a kernel's build that a job names when one fails: ``forward`` (the first call of the module),
``outputs`` (reading what it returned).

A kernel's ``build`` says which step it starts with ``step(name)``; a job listens (``listening``) and enters that
stage, so a failure there reads "(during the first forward call)", not "(during building)". Without a listener
(a preview, a probe child) a step is nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

FORWARD, OUTPUTS = "forward", "outputs"

_listener: ContextVar[Callable[[str], None] | None] = ContextVar("neffbench_build_step", default=None)


def step(name: str) -> None:
    """The build starts step ``name`` (``FORWARD``, ``OUTPUTS``)."""
    listener = _listener.get()
    if listener is not None:
        listener(name)


@contextlib.contextmanager
def listening(listener: Callable[[str], None]) -> Iterator[None]:
    """``listener(name)`` for every step a build starts inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
