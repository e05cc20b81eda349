"""Recomputes the preview off the GUI thread: torch loads in the background, edits are debounced, and only
the newest spec is computed (a slow recompute is never queued behind another). Both run on Python threads
(neffbench.gui.widgets.background), never on a Qt thread pool's: torch 2.8/2.9 segfault there.

The preview is the kernel's own (``Kernel.preview``: RoPE's tables and rotation, RMSNorm's row norms),
computed in a thread of this process with the kernel's code; the CPU check of any kernel (the
user's module included) runs in a probe child, because it runs code the window must not import.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal
from superqt.utils import QSignalDebouncer

from neffbench.gui.widgets import background
from neffbench.kernels import registry

DEBOUNCE_MS = 120
NO_PREVIEW = "This kernel has no preview of its own: Run CPU check shows its outputs, statistics and graph."


def _load_torch() -> str:
    import torch

    # The default kernel's preview, imported here so that the first compute does not pay for it.
    registry.get(registry.DEFAULT).preview_preload()
    return torch.__version__


def _compute(spec: Any, bucket: int | None):
    """The kernel's preview, or the reason there is none (returned, not raised: the GUI shows it)."""
    from neffbench.spec import errors

    # The whole spec first (name, workdir, compiler): a kernel's preview refuses errors in its own fields only.
    problems = errors(spec)
    if problems:
        return "; ".join(f"{p.field}: {p.message}" for p in problems)
    kernel = registry.for_spec(spec)
    chosen = kernel.pick_bucket(spec, bucket) if bucket is not None else None
    try:
        result = kernel.preview(spec, chosen)
    except ValueError as exc:  # the kernel's own refusals
        return str(exc)
    return result  # None: the kernel has no preview of its own (NO_PREVIEW says what to do instead)


def _check(spec: Any) -> dict:
    from neffbench.probe.client import ProbeError, shared
    from neffbench.spec import to_dict

    try:
        return shared().ask("check", {"spec": to_dict(spec)})
    except ProbeError as exc:
        return {"ok": False, "error": str(exc)}


class PreviewController(QObject):
    torch_loaded = Signal(str)
    computing = Signal()
    computed = Signal(object)  # what the kernel's preview returned (a RoPE Preview, a KernelPreview, None)
    failed = Signal(str)
    checked = Signal(dict)  # a probe's CPU-check report

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = DEBOUNCE_MS):
        super().__init__(parent)
        self._ready = False
        self._loading = None
        self._worker = None  # the running compute: the reference keeps it alive until it reports
        self._wanted: tuple[Any, int | None] | None = None
        self._withdrawn = False  # the form went invalid: drop what is being computed
        self._running: tuple[Any, int | None] | None = None
        self._check_worker = None
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
        self._loading = background.start(
            _load_torch, returned=self._on_loading_returned, errored=self._on_loading_errored
        )

    def request(self, spec: Any, bucket: int | None = None) -> None:
        """Ask for the preview of ``spec`` (``bucket``: a token count); edits within the debounce time coalesce."""
        self._wanted, self._withdrawn = (spec, bucket), False
        self._debouncer.throttle()

    def reject(self, problems: list) -> None:
        """The form is invalid: no preview, and a computation under way is dropped when it ends."""
        self._wanted, self._withdrawn = None, True
        self.failed.emit("; ".join(f"{p.field}: {p.message}" for p in problems))

    @property
    def is_checking(self) -> bool:
        return self._check_worker is not None

    def request_check(self, spec: Any) -> None:
        """Run the CPU check of ``spec`` in a probe child; ``checked`` carries its report."""
        if self._check_worker is not None:
            return
        self._check_worker = background.start(_check, spec, returned=self._on_check_worker_returned)

    def _on_check_worker_returned(self, report: dict) -> None:
        self._check_worker = None
        self.checked.emit(report)

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
        self._worker = background.start(
            _compute, *self._running, returned=self._on_worker_returned, errored=self._on_worker_errored
        )

    def _on_worker_returned(self, result) -> None:
        self._worker = None
        if self._wanted is None and not self._withdrawn:  # stale results are dropped: only the newest spec is shown
            if isinstance(result, str):
                self.failed.emit(result)
            else:
                self.computed.emit(result)
        self._start_if_idle()

    def _on_worker_errored(self, exc: Exception) -> None:
        self._worker = None
        if self._wanted is None and not self._withdrawn:
            self.failed.emit(f"Preview failed: {type(exc).__name__}: {exc}")
        self._start_if_idle()
