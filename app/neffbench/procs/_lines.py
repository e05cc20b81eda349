"""The line protocol between a parent and its child: plain lines are log text, EVENT_PREFIX lines one JSON event.

The child writes UTF-8 lines to its stdout (stderr usually merged into the same pipe, which the tools it
starts inherit) with :class:`Emitter`, one ``os.write`` per line. The parent splits the byte stream into
lines with :class:`LineSplitter` (a multibyte character split across reads is held back until its last
byte arrives) and tells events from log text with :func:`parse_event`. What the events mean is the
business of each kind of child (``jobs/protocol.py`` for compiles); here an event is a dict with a
``type``.
"""

from __future__ import annotations

import codecs
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

# Chosen so that no compiler or Python output plausibly starts with it.
EVENT_PREFIX = "@@neffbench-event@@ "


def encode_event(event: dict[str, Any]) -> str:
    """One protocol line (with its newline); non-JSON values are turned into strings."""
    return EVENT_PREFIX + json.dumps(event, separators=(",", ":"), default=str, ensure_ascii=False) + "\n"


def stage_event(stage: str) -> dict[str, Any]:
    """The child has entered ``stage`` (``t``: a Unix time in seconds)."""
    return {"type": "stage", "stage": stage, "t": time.time()}


def parse_event(line: str) -> dict[str, Any] | None:
    """The event a line carries, or None for log text (a malformed event line is log text too)."""
    if not line.startswith(EVENT_PREFIX):
        return None
    try:
        event = json.loads(line[len(EVENT_PREFIX) :])
    except json.JSONDecodeError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    return event


class LineSplitter:
    """Turns a byte stream into complete text lines, decoding UTF-8 incrementally.

    Invalid bytes become U+FFFD rather than an exception: a log must never stop streaming
    because a tool printed something odd. ``\\r\\n`` and lone ``\\r`` before ``\\n`` are stripped.
    """

    def __init__(self, encoding: str = "utf-8"):
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._pending = ""

    def feed(self, data: bytes) -> list[str]:
        text = self._pending + self._decoder.decode(data)
        *lines, self._pending = text.split("\n")
        return [line.rstrip("\r") for line in lines]

    @property
    def pending(self) -> str:
        """The start of a line not ended yet (the compiler's progress dots, printed one at a time)."""
        return self._pending

    def flush(self) -> list[str]:
        """Whatever is left at end of stream, as a last line."""
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        return [text.rstrip("\r")] if text else []


class Emitter:
    """The child's end: whole lines to fd 1 with one ``os.write`` each.

    A tool the child starts writes to the same pipe: a line written in one call (under PIPE_BUF) is
    never cut in half by its output, which Python's buffered streams cannot promise.
    """

    def __init__(self, fd: int = 1):
        self._fd = fd
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        """``text`` as it is (whole lines, each with its newline)."""
        data = text.encode("utf-8", errors="replace")
        with self._lock:
            while data:
                written = os.write(self._fd, data)
                data = data[written:]

    def line(self, text: str) -> None:
        self.write(text.rstrip("\n") + "\n")

    def event(self, event: dict[str, Any]) -> None:
        self.write(encode_event(event))

    def stage(self, stage: str) -> None:
        self.event(stage_event(stage))


def serve_lines(answer: Callable[[dict[str, Any]], Any], *, default: Callable[[Any], Any] | None = None) -> int:
    """A warm child's loop: say it is ready, then answer each JSON line on stdin with one JSON line, until EOF."""
    import sys

    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        sys.stdout.write(json.dumps(answer(json.loads(line)), default=default) + "\n")
        sys.stdout.flush()
    return 0
