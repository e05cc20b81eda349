"""The workbench window: the spec form beside Preview, Compile and Artifacts tabs; all wiring lives in ``_wire``."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QIcon
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from neffbench.backends import registry as backends
from neffbench.bundled import resource_path
from neffbench.gui.forms import field_words
from neffbench.gui.forms.kernel_forms import KernelForms
from neffbench.gui.shell import cancel as window_cancel
from neffbench.gui.shell import closing, compile_state, cpu_check, file_dialogs, spec_documents
from neffbench.gui.shell import help_menu as window_help
from neffbench.gui.shell import logs as window_logs
from neffbench.gui.shell import panels as window_panels
from neffbench.gui.shell import restore as window_settings
from neffbench.gui.shell import tabs as window_tabs
from neffbench.gui.shell.actions import build_actions, build_toolbar
from neffbench.gui.shell.discard import may_replace
from neffbench.gui.shell.first_paint import FirstPaint
from neffbench.gui.shell.form_width import FormWidths
from neffbench.gui.shell.settings import Settings
from neffbench.gui.shell.startup import Startup
from neffbench.gui.shell.tab_order import TabOrder, focus_toolbar
from neffbench.gui.shell.tabs import ARTIFACTS_TAB, COMPILE_TAB, DEFAULT_PRESET, PREVIEW_TAB, RUN_TAB, SWEEPS_TAB  # noqa: F401
from neffbench.gui.shell.toolchain_status import DoctorStatus
from neffbench.gui.shell.window_parts import WindowParts
from neffbench.gui.shell.workdir_presence import WorkdirPresence
from neffbench.jobs.records import unusable_workdir
from neffbench.spec import anchored_here

if TYPE_CHECKING:
    from neffbench.gui.preview.contribution import PreviewPanel
    from neffbench.gui.preview.controller import PreviewController
    from neffbench.gui.preview.host import PreviewHost
    from neffbench.gui.widgets.background import Task

TITLE = "NEFF Workbench"


def app_icon() -> QIcon:
    return QIcon(str(resource_path("icons", "neffbench.svg")))


class MainWindow(QMainWindow, WindowParts):
    """Presents the core and wires it to widgets; holds no compile, preview or parsing logic itself."""

    first_painted = Signal()
    panels_built = Signal()

    def __init__(self, settings: Settings | None = None, *, background: bool = True, defer_panels: bool = False):
        """``defer_panels`` builds the tabs' contents right after the first paint (how ``launch`` opens it:
        the window is up sooner); otherwise they exist when the constructor returns."""
        super().__init__()
        self.settings = settings or Settings()
        self.background = background
        self.workdir = Path.cwd() / "neffbench-workdir"
        self._spec_name = ""
        self._panels: window_panels.Panels | None = None
        self._controllers: window_panels.Controllers | None = None
        self.panels_ready = False  # built, and wired (Startup.build_other_panels)
        self.restored: set[str] = set()  # settings of the panels applied once built (window_settings.restore_panels)
        self.close_when_idle = False
        self._duration_worker: Task | None = None
        # The Preview tab's, built before the others (the controller even before the first paint, as launch opens it).
        self.preview_controller: PreviewController | None = None
        self.preview_stack: PreviewHost | None = None
        self.setWindowTitle(TITLE)
        self.setWindowIcon(app_icon())
        self._build()
        self._wire()
        self._restore()
        if self.presence.claim is None:
            self._claim_workdir()
        # As launch opens it (deferred panels, background work): the first preview is asked for now.
        self.startup = Startup(self, early_preview=defer_panels and background)
        self._first_paint = FirstPaint(self)
        self._first_paint.painted.connect(self._on_first_paint_painted)
        if not defer_panels:
            self.build_panels()

    # ---- construction ----

    def _build(self) -> None:
        self.form = KernelForms()
        self.form.setMinimumWidth(330)
        self.tabs = QTabWidget()
        self._pages = []
        for index, title in enumerate(window_tabs.TAB_TITLES):
            page = QWidget()
            layout = QVBoxLayout(page)
            layout.setContentsMargins(0, 0, 0, 0)
            # Until its panel is built (window_panels.put): a sentence, not an empty page.
            waiting = "Loading torch for the preview…" if index == window_tabs.PREVIEW_TAB else "Starting up…"
            placeholder = QLabel(waiting, objectName="tab-placeholder", alignment=Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(placeholder)
            self._pages.append(page)
            self.tabs.addTab(page, title)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.form)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([380, 1120])
        # On a screen smaller than the window's minimum the window scrolls; nothing overlaps.
        central = QScrollArea()
        central.setWidget(self.splitter)
        central.setWidgetResizable(True)
        central.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setCentralWidget(central)
        build_actions(self)
        build_toolbar(self)
        self.doctor_status = DoctorStatus()
        # Permanent: a message (what an action did, for a few seconds) shows beside it, never over it.
        self.doctor_status.install(self.statusBar())
        self.presence = WorkdirPresence(self.statusBar(), Path(self.settings.q.fileName()).parent / "windows")
        self.tab_order = TabOrder(self)

    def build_panels(self) -> None:
        """The tabs' contents and their controllers (their modules are imported here, after the first paint)."""
        self.startup.build_preview_panel()
        self.startup.build_other_panels()

    @property
    def panels(self) -> window_panels.Panels:
        """The Compile, Artifacts, Run, Sweeps, Numerics and Structure tabs' panels: ask ``panels_ready`` first."""
        assert self._panels is not None, "the tabs' panels are built after the first paint"
        return self._panels

    @property
    def controllers(self) -> window_panels.Controllers:
        """What runs a compile, a benchmark and a compare, built with the panels: ask ``panels_ready`` first."""
        assert self._controllers is not None, "the tabs' controllers are built after the first paint"
        return self._controllers

    def _wire(self) -> None:
        form = self.form
        form.spec_changed.connect(self._on_form_spec_changed)
        form.problems_changed.connect(self._on_form_problems_changed)
        form.memory.allow_toggled.connect(self._on_form_problems_changed)
        self.compile_action.triggered.connect(self.compile)
        self.recompile_action.triggered.connect(self.recompile)
        self.cancel_action.triggered.connect(lambda: window_cancel.triggered(self))  # compile, sweep or run
        self.open_action.triggered.connect(lambda: file_dialogs.open_spec(self))
        self.save_action.triggered.connect(lambda: file_dialogs.save_spec(self))
        self.workdir_action.triggered.connect(lambda: file_dialogs.choose_workdir(self))
        self.workdir_edit.editingFinished.connect(self._on_workdir_edit_editing_finished)
        self.quit_action.triggered.connect(self.close)
        for name, action in self.preset_actions.items():
            action.triggered.connect(lambda _checked=False, name=name: self.apply_preset(name))
        self.doctor_status.gathered.connect(self._on_doctor_status_gathered)
        self.manual_action.triggered.connect(lambda: window_help.show_manual(self))
        self.shortcuts_action.triggered.connect(lambda: window_help.show_shortcuts(self))
        self.about_action.triggered.connect(
            lambda: window_help.show_about(self, self.doctor_status.facts, self.doctor_status.lines())
        )
        self.doctor_status.details_requested.connect(self.about_action.trigger)
        self.toolbar_action.triggered.connect(lambda: focus_toolbar(self))
        for changed in (form.kernel_changed, form.spec_changed, self.panels_built):
            changed.connect(self.tab_order.request)
        self.tab_order.request()

    def explain_log(self, path: str) -> None:
        window_logs.explain_log(self, path)

    # ---- settings (window_settings.py) ----

    def _restore(self) -> None:
        window_settings.restore(self)
        self.form_widths = FormWidths(self.splitter, self.settings, self.form.kernel)

    def _splitters(self) -> dict[str, QSplitter]:
        return window_settings.splitters(self)

    def save_settings(self) -> None:
        window_settings.save(self)

    # ---- public operations (the actions' targets, and what tests drive) ----

    def current_spec(self):
        """The form's spec with the toolbar's workdir, its paths typed relative to where the window was started made
        absolute (as the form's Resolve reads them): what compiles, checks, sweeps and saves."""
        return dataclasses.replace(anchored_here(self.form.spec()), workdir=str(self.workdir))

    def apply_preset(self, name: str) -> bool:
        return spec_documents.apply_preset(self, name)

    def open_spec(self, path: str | Path) -> bool:
        return spec_documents.open_spec(self, path)

    def save_spec(self, path: str | Path) -> Path:
        return spec_documents.save_spec(self, path)

    def set_workdir(self, path: str | Path, *, rescan: bool = True) -> bool:
        """Use ``path`` as the workdir, or refuse it (keeping the one before, and saying why) when it cannot be one:
        a file, a folder that cannot be written or made. The tabs that show a workdir follow it."""
        workdir = Path(path).expanduser().absolute()
        problem = unusable_workdir(workdir)
        if problem:
            self.workdir_edit.setText(str(self.workdir))
            self.statusBar().showMessage(f"Workdir not changed: {problem}. Still {self.workdir}.", 10000)
            return False
        self.workdir = workdir
        self.workdir_edit.setText(str(self.workdir))
        self._claim_workdir()
        if self.panels_ready:
            self.panels.artifacts.set_workdir(self.workdir, rescan=rescan)
            self.panels.sweeps.set_workdir(self.workdir)
            window_panels.follow_workdir(self)
            self._refresh_compile_state()
        return True

    def _claim_workdir(self) -> None:
        self.presence.take(self.workdir)
        self._show_title()

    def _show_title(self) -> None:
        self.setWindowTitle(self.presence.title(f"{self._spec_name} — {TITLE}" if self._spec_name else TITLE))

    @property
    def busy(self) -> bool:
        """A compile or a sweep is running (one at a time: they share the Compile tab)."""
        return self.controllers.compile.is_running or self.panels.sweeps.is_running

    def compile(self, *, use_cache: bool = True) -> None:
        if not self.panels_ready or self.busy or self.form.errors() or self.form.memory.refused():
            return
        self.controllers.compile.start(self.current_spec(), self.workdir, use_cache=use_cache)

    def recompile(self) -> None:
        """Compile even what the cache would serve."""
        self.compile(use_cache=False)

    def cancel(self) -> None:
        if self.panels_ready and self.controllers.compile.is_running:
            self.controllers.compile.cancel()
            self.cancel_action.setEnabled(False)
            self.panels.compile.show_cancelling()

    def start_background(self) -> None:
        """Work that waits until the window is on screen: torch, the toolchain check, the workdir scan."""
        assert self.preview_controller is not None  # made by Startup or window_panels.build_preview
        self.preview_controller.load_torch()
        self.startup.start_the_rest()

    # ---- slots ----

    def _on_first_paint_painted(self) -> None:
        self.first_painted.emit()
        # After this paint has reached the screen: the tabs' contents, then the slow things in the background.
        QTimer.singleShot(0, self.startup.after_first_paint)

    def _on_form_spec_changed(self, spec) -> None:
        self._spec_name = spec.name
        self._show_title()
        if self.preview_controller is None:
            return
        errors = self.form.errors()
        if errors:
            # Whatever kind of error (a value out of range, text that is no value yet): no preview of a
            # spec the form does not show, and none arriving late from before the error either.
            self.preview_controller.reject(errors, field_words.labels(spec))
            return
        bucket = self.preview_stack.chosen_bucket() if self.preview_stack is not None else None
        self.preview_controller.request(spec, bucket)

    def _on_form_problems_changed(self, _problems: list) -> None:
        self._refresh_compile_state()

    def _refresh_compile_state(self) -> None:
        self.update_compile_action()
        if self.panels_ready:
            self.panels.compile.show_plan(self.form.spec(), str(self.workdir), self.doctor_status.backend)

    @property
    def compile_button(self) -> QWidget | None:
        return compile_state.compile_button(self)

    def update_compile_action(self) -> None:
        compile_state.update(self)

    def _on_preview_controller_torch_loaded(self, version: str) -> None:
        self.statusBar().showMessage(f"torch {version} loaded", 3000)
        # Start-up is over: keep the collector from walking torch's, Qt's and pyqtgraph's objects again
        # (a full collection over them stalls the event loop for ~100 ms; they live as long as the app).
        gc.freeze()

    @property
    def preview_panel(self) -> PreviewPanel:
        """The Preview tab's panel of the kernel in the form."""
        assert self.preview_stack is not None  # built with the panels
        return self.preview_stack.panel

    @property
    def preview_panels(self) -> dict[str, PreviewPanel]:
        assert self.preview_stack is not None  # built with the panels
        return self.preview_stack.panels

    def _on_form_kernel_changed(self, name: str) -> None:
        if self.preview_stack is not None:
            self.preview_stack.show_kernel(name)
            window_settings.restore_panels(self)  # a kernel's preview panel is built when first shown
        self.form_widths.switch(name, self.form.current())

    def _on_preview_stack_bucket_chosen(self, bucket: int) -> None:
        assert self.preview_controller is not None  # made before the stack that sends this
        self.preview_controller.request(self.form.spec(), bucket)

    def _on_preview_stack_check_requested(self) -> None:
        cpu_check.run(self)

    def _on_preview_stack_keep_state_requested(self, names: list) -> None:
        cpu_check.keep_state(self, names)

    def _on_workdir_edit_editing_finished(self) -> None:
        text = self.workdir_edit.text().strip()
        if text and Path(text).expanduser().absolute() != self.workdir:
            self.set_workdir(text)

    def _on_controller_started(self, spec) -> None:
        status = self.doctor_status
        hint = ""
        if backends.makes_no_neff(status.backend):
            hint = "Backend cpu-check: the Neuron toolchain is not installed here, so no NEFF will be made."
        self.panels.compile.reset_style()
        self.panels.compile.show_started(spec, hint)
        self.cancel_action.setEnabled(True)
        self.update_compile_action()
        self.tabs.setCurrentIndex(COMPILE_TAB)
        from neffbench.gui.widgets import background
        from neffbench.jobs.records import last_duration

        self._duration_worker = background.start(
            last_duration,
            spec.workdir,
            spec,
            status.backend,
            returned=self.panels.compile.show_last_duration,
            errored=lambda exc: None,
        )  # no estimate, nothing else lost

    def _on_controller_job_finished(self, result) -> None:
        self.panels.compile.show_job_finished(result)
        self.panels.artifacts.rescan()
        if result.outcome == "succeeded" and not self.controllers.run.is_running:
            self.panels.run.set_target(str(result.job_dir))  # the step after the compile, ready

    def _on_controller_finished(self, run) -> None:
        self.panels.compile.show_finished(run)
        self.cancel_action.setEnabled(False)
        self.update_compile_action()
        self.statusBar().showMessage(run.headline, 5000)
        if self.close_when_idle:
            self.close()

    def _on_compile_panel_job_activated(self, job_dir: str) -> None:
        self.tabs.setCurrentIndex(ARTIFACTS_TAB)
        self.panels.artifacts.select(job_dir)

    def _on_artifacts_run_requested(self, target: str) -> None:
        if not self.controllers.run.is_running:
            self.panels.run.set_target(target)
        self.tabs.setCurrentIndex(RUN_TAB)

    def _on_artifacts_spec_requested(self, spec) -> None:
        if not may_replace(self, spec, f"Re-opening the spec of the job {spec.name}"):
            return
        self.form.set_spec(spec)
        self.statusBar().showMessage(f"Loaded the spec of a job ({spec.name}); the workdir is unchanged.", 5000)

    def _on_doctor_status_gathered(self, _facts) -> None:
        self._refresh_compile_state()

    # ---- closing ----

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        closing.close_event(self, event)
