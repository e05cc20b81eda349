"""The worker's side of the protocol: writing lines and events, and copying the compiler's log file as it grows."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

from neffbench.jobs.protocol import LineSplitter, encode_event, encode_logfile_line, stage_event

POLL_S = 0.1


class Emitter:
    """Writes whole lines to fd 1 with one ``os.write`` each.

    The compiler writes to the same pipe: a line written in one call (under PIPE_BUF) is never
    cut in half by its output, which Python's buffered streams cannot promise.
    """

    def __init__(self, fd: int = 1):
        self._fd = fd
        self._lock = threading.Lock()

    def _write(self, text: str) -> None:
        data = text.encode("utf-8", errors="replace")
        with self._lock:
            while data:
                written = os.write(self._fd, data)
                data = data[written:]

    def line(self, text: str) -> None:
        self._write(text.rstrip("\n") + "\n")

    def event(self, event: dict[str, Any]) -> None:
        self._write(encode_event(event))

    def stage(self, stage: str) -> None:
        self.event(stage_event(stage))

    def logfile_line(self, text: str) -> None:
        self._write(encode_logfile_line(text))


class LogTail:
    """Copies new lines of ``log-neuron-cc.txt`` to the parent while the compiler runs.

    It also notices when the compiler has started (``command.txt`` or the log file appears) so the
    worker can report the ``compiling`` stage, which happens inside one torch_neuronx.trace call.
    """

    def __init__(self, emitter: Emitter, compiler_dir: Path, logfile: Path,
                 on_compiler_started: Callable[[], None] | None = None):
        self._emitter = emitter
        self._dir = compiler_dir
        self._logfile = logfile
        self._on_started = on_compiler_started
        self._started = False
        self._stop = threading.Event()
        self._splitter = LineSplitter()
        self._fh = None
        self._thread = threading.Thread(target=self._run, name="neffbench-logtail", daemon=True)

    def __enter__(self) -> LogTail:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Copy what is left (a last line without a newline included) and stop."""
        self._stop.set()
        self._thread.join()
        self._poll()
        for line in self._splitter.flush():
            self._emitter.logfile_line(line)
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self._poll()

    def _poll(self) -> None:
        if not self._started and ((self._dir / "command.txt").exists() or self._logfile.exists()):
            self._started = True
            if self._on_started:
                self._on_started()
        if self._fh is None:
            try:
                self._fh = self._logfile.open("rb")
            except OSError:
                return
        while True:
            data = self._fh.read(1 << 16)
            if not data:
                break
            for line in self._splitter.feed(data):
                self._emitter.logfile_line(line)
