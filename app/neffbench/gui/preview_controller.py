"""Recomputes the preview off the GUI thread: torch loads in the background, edits are debounced, and only
the newest spec is computed (a slow recompute is never queued behind another)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from superqt.utils import QSignalDebouncer, create_worker

from neffbench.spec import CompileSpec

DEBOUNCE_MS = 120


def _load_torch() -> str:
    import torch

    import neffbench.kernels.rope.preview  # noqa: F401 - imported here so that the first compute does not pay for it

    return torch.__version__


def _compute(spec: CompileSpec, bucket: int | None):
    """A Preview, or the reason there is none (returned, not raised: the GUI shows it)."""
    from neffbench.kernels.rope.preview import PreviewError, compute

    try:
        return compute(spec, bucket=bucket)
    except PreviewError as exc:
        return str(exc)


class PreviewController(QObject):
    torch_loaded = Signal(str)
    computing = Signal()
    computed = Signal(object)  # neffbench.kernels.rope.preview.Preview
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = DEBOUNCE_MS):
        super().__init__(parent)
        self._ready = False
        self._loading = None
        self._worker = None  # the running compute: the reference keeps it alive until it reports
        self._wanted: tuple[CompileSpec, int | None] | None = None
        self._running: tuple[CompileSpec, int | None] | None = None
        self._debouncer = QSignalDebouncer(self)
        self._debouncer.setTimeout(debounce_ms)
        self._debouncer.triggered.connect(self._on_debouncer_triggered)

    @property
    def is_ready(self) -> bool:
        return self._ready

    @property
    def is_busy(self) -> bool:
        return self._worker is not None or self._wanted is not None

    def load_torch(self) -> None:
        """Import torch and the preview code on a worker thread (the window is already up)."""
        if self._ready or self._loading is not None:
            return
        self._loading = create_worker(_load_torch, _connect={"returned": self._on_loading_returned,
                                                            "errored": self._on_loading_errored},
                                      _ignore_errors=True)

    def request(self, spec: CompileSpec, bucket: int | None = None) -> None:
        """Ask for the preview of ``spec``; edits within the debounce time coalesce."""
        if bucket is not None and bucket not in spec.inputs.num_tokens:
            bucket = None
        self._wanted = (spec, bucket)
        self._debouncer.throttle()

    def _on_loading_returned(self, version: str) -> None:
        self._ready, self._loading = True, None
        self.torch_loaded.emit(version)
        self._start_if_idle()

    def _on_loading_errored(self, exc: Exception) -> None:
        self._loading = None
        self.failed.emit(f"torch did not load, so there is no preview: {type(exc).__name__}: {exc}")

    def _on_debouncer_triggered(self) -> None:
        self._start_if_idle()

    def _start_if_idle(self) -> None:
        if not self._ready or self._worker is not None or self._wanted is None:
            return
        self._running, self._wanted = self._wanted, None
        self.computing.emit()
        self._worker = create_worker(_compute, *self._running,
                                     _connect={"returned": self._on_worker_returned,
                                               "errored": self._on_worker_errored},
                                     _ignore_errors=True)

    def _on_worker_returned(self, result) -> None:
        self._worker = None
        if self._wanted is None:  # stale results are dropped: only the newest spec is shown
            if isinstance(result, str):
                self.failed.emit(result)
            else:
                self.computed.emit(result)
        self._start_if_idle()

    def _on_worker_errored(self, exc: Exception) -> None:
        self._worker = None
        if self._wanted is None:
            self.failed.emit(f"Preview failed: {type(exc).__name__}: {exc}")
        self._start_if_idle()
