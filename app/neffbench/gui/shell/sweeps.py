"""The window's sweeps: the Sweep… action and dialog, the sweep controller, its progress in the Compile tab
and the Sweeps tab, wired in one place."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog

from neffbench.gui.compile.panel import CompilePanel
from neffbench.gui.sweeps.controller import SweepController
from neffbench.gui.sweeps.dialog import SweepDialog
from neffbench.gui.sweeps.panel import SweepsPanel

MESSAGE_MS = 6000  # what the Sweeps tab did (a diff made), gone before it could be read as current


class WindowSweeps(QObject):
    """Owns the sweep controller and the Sweeps tab's panel once the window's panels are built."""

    def __init__(self, window, page, compile_panel: CompilePanel) -> None:
        """``compile_panel`` shows a sweep's progress, as it shows a compile's."""
        super().__init__(window)
        self.window = window
        self.compile_panel = compile_panel
        self.controller = SweepController(self)
        self.panel = SweepsPanel()
        self.panel.workdir = str(window.workdir)
        page.layout().addWidget(self.panel)
        self.dialog: SweepDialog | None = None
        ctl, panel = self.controller, compile_panel
        ctl.started.connect(self._on_controller_started)
        ctl.lines_received.connect(panel.show_lines)
        ctl.event_received.connect(self._on_controller_event_received)
        ctl.failed.connect(self._on_controller_failed)
        ctl.finished.connect(self._on_controller_finished)
        self.panel.message.connect(self._on_panel_message)
        window.sweep_action.triggered.connect(self.open_dialog)
        self._error: str | None = None
        self.panel.rescan()

    def _on_panel_message(self, text: str) -> None:
        self.window.statusBar().showMessage(text, MESSAGE_MS)

    @property
    def is_running(self) -> bool:
        return self.controller.is_running

    def set_workdir(self, workdir) -> None:
        self.panel.set_workdir(str(workdir))

    def open_dialog(self) -> None:
        """The form's spec as it stands (Start is refused while the form has errors or a compile runs)."""
        w = self.window
        if w.controllers.compile.is_running or self.is_running or w.form.errors():
            w.statusBar().showMessage("Finish or cancel the running compile, and fix the form, before a sweep.", 8000)
            return
        self.dialog = SweepDialog(w.current_spec(), w, backend=w.controllers.compile.backend)
        if self.dialog.exec() == QDialog.DialogCode.Accepted:
            self.start(self.dialog.plan, self.dialog.options())
        self.dialog = None

    def start(self, plan, options) -> None:
        self._error = None
        self.compile_panel.workdir = str(self.window.workdir)
        self.controller.start(plan, str(self.window.workdir), options)

    def cancel(self) -> None:
        if self.is_running:
            self.controller.cancel()
            self.compile_panel.show_cancelling()
            self.window.cancel_action.setEnabled(False)

    def _on_controller_started(self, plan) -> None:
        w = self.window
        self.compile_panel.show_sweep_started(plan)
        w.tabs.setCurrentWidget(self.compile_panel.parentWidget())
        w.cancel_action.setEnabled(True)
        w.update_compile_action()

    def _on_controller_event_received(self, event: dict) -> None:
        self.compile_panel.show_sweep_event(event)
        if event.get("type") == "sweep_point" and event.get("state") in ("succeeded", "failed"):
            self.window.panels.artifacts.rescan()
        if event.get("type") == "sweep_started":
            self.panel.rescan()

    def _on_controller_failed(self, message: str) -> None:
        self._error = message

    def _on_controller_finished(self, result) -> None:
        w = self.window
        text = self.compile_panel.show_sweep_finished(result, self._error)
        w.statusBar().showMessage(text, 15000)
        w.cancel_action.setEnabled(False)
        w.update_compile_action()
        w.panels.artifacts.rescan()
        if result is not None:
            self.panel.show_sweep(result.sweep_id)
        if w.close_when_idle:
            w.close()
