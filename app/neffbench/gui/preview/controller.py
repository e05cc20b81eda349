"""Recomputes the preview off the GUI thread: torch loads in the background, edits are debounced, and only
the newest spec is computed (a slow recompute is never queued behind another). Both run on Python threads
(neffbench.gui.widgets.background), never on a Qt thread pool's: torch 2.8/2.9 segfault there.

The preview is the kernel's own (``Kernel.preview``: RoPE's tables and rotation, RMSNorm's row norms),
computed in a thread of this process with the kernel's code; the CPU check of any kernel (the
user's module included) runs in a probe child, because it runs code the window must not import.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from neffbench.gui.forms.field_words import problem_text
from neffbench.gui.widgets import background
from neffbench.spec import previewing

DEBOUNCE_MS = 120
# After the probe's first preview, the window's own torch import waits this long: the preview paints first
# (the import holds the interpreter for a second).
LOAD_AFTER_PROBE_MS = 100
NO_PREVIEW = "This kernel has no preview of its own: Run CPU check shows its outputs, statistics and graph."


def _load_torch() -> str:
    import torch

    previewing.preload()
    return torch.__version__


def _compute(spec: Any, bucket: int | None):
    return previewing.compute(spec, bucket)


class ProbePreviewError(RuntimeError):
    """The warm probe gave no preview (it could not start, crashed or failed); this process computes it instead."""


def _compute_in_probe(spec: Any, bucket: int | None):
    """The preview as the warm probe computes it: the window shows it before its own torch has loaded."""
    import pickle
    import tempfile
    from pathlib import Path

    from neffbench.probe.client import ProbeError, shared
    from neffbench.spec import to_dict

    with tempfile.TemporaryDirectory(prefix="neffbench-preview-") as tmp:
        path = Path(tmp) / "preview.pickle"
        try:
            report = shared().ask("preview", {"spec": to_dict(spec), "bucket": bucket, "path": str(path)})
        except ProbeError as exc:
            raise ProbePreviewError(str(exc)) from exc
        if not report.get("ok"):
            raise ProbePreviewError(report.get("error") or "the probe reported no preview")
        if "refused" in report:
            return report["refused"]
        return pickle.loads(path.read_bytes())  # noqa: S301 - our own child's file, in a directory only we can read


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

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = DEBOUNCE_MS, probe_first: bool = False):
        """``probe_first``: until this process's torch has loaded, the warm probe (a child that started importing
        torch as the window did) computes the previews, so the first one shows about when the window does; the
        first it returns starts this process's own torch load."""
        super().__init__(parent)
        self._probe_first = probe_first
        self._latest: tuple[str, Any] | None = None  # what was last reported, for panels wired after it
        self._ready = False
        self._loading: background.Task | None = None
        # The running compute: the reference keeps it alive until it reports.
        self._worker: background.Task | None = None
        self._wanted: tuple[Any, int | None] | None = None
        self._withdrawn = False  # the form went invalid: drop what is being computed
        self._running: tuple[Any, int | None] | None = None
        self._check_worker: background.Task | None = None
        self._debounce_ms = debounce_ms
        self._debouncer = None  # made at the first edit (``_debounced``)

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

    def request(self, spec: Any, bucket: int | None = None, *, now: bool = False) -> None:
        """Ask for the preview of ``spec`` (``bucket``: a token count); edits within the debounce time coalesce.
        ``now``: no debounce (the first preview, which no edit follows)."""
        self._wanted, self._withdrawn = (spec, bucket), False
        if now:
            self._start_if_idle()
        else:
            self._debounced().throttle()

    def _debounced(self):
        """The debouncer, made at the first edit: importing superqt imports all of it (a tenth of a second), which
        the first preview (asked ``now``, as the window opens, before its first paint) does without."""
        if self._debouncer is None:
            from superqt.utils import QSignalDebouncer

            self._debouncer = QSignalDebouncer(self)
            self._debouncer.setTimeout(self._debounce_ms)
            self._debouncer.triggered.connect(self._on_debouncer_triggered)
        return self._debouncer

    def replay(self) -> None:
        """Report again what was last reported (to panels wired after the first preview came)."""
        if self._latest is not None:
            kind, payload = self._latest
            (self.computed if kind == "computed" else self.failed).emit(payload)

    def _report(self, kind: str, payload: Any) -> None:
        self._latest = (kind, payload)
        (self.computed if kind == "computed" else self.failed).emit(payload)

    def reject(self, problems: list, words: dict[str, str] | None = None) -> None:
        """The form is invalid: no preview, and a computation under way is dropped when it ends. ``words``: the form's
        labels for the fields (``field_words.labels``), else the problems name their keys."""
        self._wanted, self._withdrawn = None, True
        self._report("failed", "\n".join(problem_text(p, words or {}) for p in problems))

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
        self._report("failed", f"torch did not load, so there is no preview: {type(exc).__name__}: {exc}")

    def _on_debouncer_triggered(self) -> None:
        self._start_if_idle()

    def _start_if_idle(self) -> None:
        if self._worker is not None or self._wanted is None:
            return
        if not self._ready and not self._probe_first:
            return
        self._running, self._wanted = self._wanted, None
        self.computing.emit()
        compute = _compute if self._ready else _compute_in_probe
        self._worker = background.start(
            compute, *self._running, returned=self._on_worker_returned, errored=self._on_worker_errored
        )

    def _on_worker_returned(self, result) -> None:
        self._worker = None
        if self._wanted is None and not self._withdrawn:  # stale results are dropped: only the newest spec is shown
            self._report("failed" if isinstance(result, str) else "computed", result)
        if not self._ready and self._loading is None:
            # The probe answered: this process's own torch loads once the preview has been painted.
            QTimer.singleShot(LOAD_AFTER_PROBE_MS, self.load_torch)
        self._start_if_idle()

    def _on_worker_errored(self, exc: Exception) -> None:
        self._worker = None
        if isinstance(exc, ProbePreviewError):
            # No preview from the probe: compute this one here, once torch has loaded, rather than fail it.
            self._probe_first = False
            if self._wanted is None and not self._withdrawn:
                self._wanted = self._running
            self.load_torch()
            return
        if self._wanted is None and not self._withdrawn:
            from neffbench.kernels.api import KernelError

            # A kernel's own refusal is a sentence already; anything else is named by its class.
            said = str(exc) if isinstance(exc, KernelError) else f"{type(exc).__name__}: {exc}"
            self._report("failed", f"Preview failed: {said}")
        self._start_if_idle()
