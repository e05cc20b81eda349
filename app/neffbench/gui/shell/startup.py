"""The order the window starts in, so that the first preview shows as soon as the window does.

As ``launch`` opens it, the warm probe has been importing torch since the process began: the restored spec's
preview is asked of it at once, the Preview tab is built at the first paint, and the other tabs, the toolchain
check and the workdir scan only after the first preview has been drawn (or at the latest after a while). This
process's own torch loads behind that preview (the preview controller). Tests build everything at once.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from neffbench.gui.shell import panels as window_panels
from neffbench.gui.shell import restore as window_settings
from neffbench.gui.shell import warm_server

# The other tabs, the toolchain check and the workdir scan start this long after the first preview is drawn (a
# timer runs after the events its drawing posted, so it paints first), and at the latest this long after the first
# paint (a slow or failing probe holds nothing up for long).
REST_AFTER_PREVIEW_MS = 100
REST_AT_THE_LATEST_MS = 8000


class Startup(QObject):
    def __init__(self, window, *, early_preview: bool):
        super().__init__(window)
        self.window = window
        self.early_preview = early_preview
        self.rest_started = False
        if early_preview:
            self._request_first_preview()

    def _request_first_preview(self) -> None:
        """The restored spec's preview, of the warm probe (whose torch import began with the process)."""
        from neffbench.gui.preview.controller import PreviewController

        window = self.window
        window.preview_controller = controller = PreviewController(window, probe_first=True)
        controller.computed.connect(self._on_first_preview_reported)
        controller.failed.connect(self._on_first_preview_reported)
        if not window.form.errors():
            controller.request(window.form.spec(), now=True)

    def _on_first_preview_reported(self, _result) -> None:
        controller = self.window.preview_controller
        controller.computed.disconnect(self._on_first_preview_reported)
        controller.failed.disconnect(self._on_first_preview_reported)
        QTimer.singleShot(REST_AFTER_PREVIEW_MS, self.start_the_rest)

    def after_first_paint(self) -> None:
        window = self.window
        if not self.early_preview:
            window.build_panels()
            if window.background:
                window.start_background()
            return
        self.build_preview_panel()
        if window.form.errors():  # no first preview to wait for
            self.start_the_rest()
        else:
            QTimer.singleShot(REST_AT_THE_LATEST_MS, self.start_the_rest)

    def build_preview_panel(self) -> None:
        window = self.window
        if window.preview_stack is not None:
            return
        window_panels.build_preview(window)
        window_settings.restore_panels(window)
        if self.early_preview:
            window.preview_controller.replay()  # if the first preview came before its panel
        else:
            window.preview_controller.request(window.form.spec())

    def build_other_panels(self) -> None:
        window = self.window
        if window.panels_ready:
            return
        window._controllers = window_panels.build_controllers(window)
        window._panels = window_panels.build(window)
        window_panels.wire(window)
        window.panels_ready = True
        window_settings.restore_panels(window)
        window._refresh_compile_state()
        window.panels_built.emit()

    def start_the_rest(self) -> None:
        """The other tabs, the toolchain check and the workdir scan: after the first preview, never before it."""
        if self.rest_started or not self.window.isVisible():  # closed before the first preview came
            return
        self.rest_started = True
        self.build_other_panels()
        self.window.doctor_status.gather()
        self.window.panels.artifacts.rescan()
        warm_server.start(self.window)
