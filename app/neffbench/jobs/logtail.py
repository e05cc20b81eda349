"""The compile worker's copy of the compiler's log file, sent to the parent line by line as it grows."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from neffbench.jobs.protocol import encode_logfile_line
from neffbench.procs import Emitter, LineSplitter

POLL_S = 0.1


class LogTail:
    """Copies new lines of ``log-neuron-cc.txt`` to the parent while the compiler runs.

    It also notices when the compiler has started (``command.txt`` or the log file appears) so the
    worker can report the ``compiling`` stage, which happens inside one torch_neuronx.trace call.
    """

    def __init__(
        self, emitter: Emitter, compiler_dir: Path, logfile: Path, on_compiler_started: Callable[[], None] | None = None
    ):
        self._emitter = emitter
        self._dir = compiler_dir
        self._logfile = logfile
        self._on_started = on_compiler_started
        self._started = False
        self._stop = threading.Event()
        self._splitter = LineSplitter()
        self._fh: BinaryIO | None = None
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
            self._emitter.write(encode_logfile_line(line))
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
                self._emitter.write(encode_logfile_line(line))
