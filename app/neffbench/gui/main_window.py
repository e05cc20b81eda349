"""The workbench window: the spec form beside Preview, Compile and Artifacts tabs; all wiring lives in ``_wire``."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.doctor_status import DoctorStatus
from neffbench.gui.settings import Settings
from neffbench.gui.kernel_forms import KernelForms
from neffbench.kernels import registry
from neffbench.presets import load_preset, preset_kernels, preset_names
from neffbench.bundled import resource_path
from neffbench.spec import SpecError, load, loads_toml, save

TITLE = "NEFF Workbench"
PREVIEW_TAB, COMPILE_TAB, ARTIFACTS_TAB = range(3)
DEFAULT_PRESET = "seed"


def app_icon() -> QIcon:
    return QIcon(str(resource_path("icons", "neffbench.svg")))


class _FirstPaint(QObject):
    """Reports the first paint of anything in the window, then stops listening.

    It watches the whole application: a main window covered by its children may never get a
    paint event of its own.
    """

    painted = Signal()

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if (event.type() == QEvent.Type.Paint and isinstance(watched, QWidget)
                and watched.window() is self._window):
            QApplication.instance().removeEventFilter(self)
            self.painted.emit()
        return False


class MainWindow(QMainWindow):
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
        self.panels_ready = False
        self.controller = None
        self._close_when_idle = False
        self._duration_worker = None
        self.setWindowTitle(TITLE)
        self.setWindowIcon(app_icon())
        self._build()
        self._wire()
        self._restore()
        self._first_paint = _FirstPaint(self)
        self._first_paint.painted.connect(self._on_first_paint_painted)
        if not defer_panels:
            self.build_panels()

    # ---- construction ----

    def _build(self) -> None:
        self.form = KernelForms()
        self.form.setMinimumWidth(330)
        self.tabs = QTabWidget()
        self._pages = []
        for title in ("&Preview", "&Compile", "&Artifacts"):
            page = QWidget()
            QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages.append(page)
            self.tabs.addTab(page, title)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.form)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([380, 1120])
        self.setCentralWidget(self.splitter)
        self._build_actions()
        self._build_toolbar()
        self.doctor_status = DoctorStatus()
        self.statusBar().addPermanentWidget(self.doctor_status)

    def _action(self, text: str, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
        action.setToolTip(tip or text)
        action.setStatusTip(tip)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.compile_action = self._action("Compile", [QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.cancel_action = self._action("Cancel", QKeySequence(Qt.Key.Key_Escape), "Stop the running compile (Esc)")
        self.cancel_action.setEnabled(False)
        self.open_action = self._action("Open spec…", QKeySequence.StandardKey.Open, "Load a spec file (TOML or JSON)")
        self.save_action = self._action("Save spec…", QKeySequence.StandardKey.Save,
                                        "Save the form as a TOML spec, the file `neffbench compile` reads")
        self.workdir_action = self._action("Choose workdir…", None, "Pick the directory that receives the jobs")
        self.quit_action = self._action("Quit", QKeySequence.StandardKey.Quit)
        self.preset_actions: dict[str, QAction] = {}
        kernels = preset_kernels()
        for name in preset_names():
            self.preset_actions[name] = QAction(name, self)
            self.preset_actions[name].setData(kernels.get(name))
        for i in range(3):
            tab_action = self._action(f"Tab {i + 1}", QKeySequence(f"Ctrl+{i + 1}"))
            tab_action.triggered.connect(lambda _checked=False, i=i: self.tabs.setCurrentIndex(i))
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addActions([self.open_action, self.save_action])
        self.presets_menu = file_menu.addMenu("&Presets")
        # One submenu per kernel; the default kernel's presets, the first and most, stay at the top level.
        submenus: dict[str, object] = {}
        for action in self.preset_actions.values():
            kernel = action.data() or registry.DEFAULT
            if kernel == registry.DEFAULT:
                self.presets_menu.addAction(action)
                continue
            if kernel not in submenus:
                submenus[kernel] = self.presets_menu.addMenu(kernel)
            submenus[kernel].addAction(action)
        file_menu.addAction(self.workdir_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        compile_menu = self.menuBar().addMenu("&Compile")
        compile_menu.addActions([self.compile_action, self.cancel_action])

    def _build_toolbar(self) -> None:
        bar = self.addToolBar("Main")
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.addAction(self.compile_action)
        bar.addAction(self.cancel_action)
        bar.addSeparator()
        bar.addAction(self.open_action)
        bar.addAction(self.save_action)
        presets = QToolButton()
        presets.setText("Presets")
        presets.setMenu(self.presets_menu)
        presets.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        presets.setToolTip("Fill the form from a bundled model geometry")
        bar.addWidget(presets)
        bar.addSeparator()
        bar.addWidget(QLabel(" Workdir "))
        self.workdir_edit = QLineEdit()
        self.workdir_edit.setObjectName("workdir")
        self.workdir_edit.setMinimumWidth(280)
        self.workdir_edit.setToolTip("Directory that receives one job directory per compile; Artifacts lists it.")
        bar.addWidget(self.workdir_edit)
        bar.addAction(self.workdir_action)
        self.compile_button = bar.widgetForAction(self.compile_action)
        self.compile_button.setObjectName("compileButton")
        font = self.compile_button.font()
        font.setBold(True)
        self.compile_button.setFont(font)

    def build_panels(self) -> None:
        """The tabs' contents and their controllers (their modules are imported here, after the first paint)."""
        if self.panels_ready:
            return
        from PySide6.QtWidgets import QStackedWidget

        from neffbench.gui.artifacts import ArtifactsPanel
        from neffbench.gui.compile_controller import CompileController
        from neffbench.gui.compile_panel import CompilePanel
        from neffbench.gui.preview_controller import PreviewController

        self.controller = CompileController(self)
        self.preview_controller = PreviewController(self)
        self.preview_stack = QStackedWidget()
        self.preview_panels: dict[str, QWidget] = {}
        self.compile_panel = CompilePanel()
        self.artifacts = ArtifactsPanel()
        self.artifacts.workdir = self.workdir
        for page, panel in zip(self._pages, (self.preview_stack, self.compile_panel, self.artifacts)):
            page.layout().addWidget(panel)
        self._show_preview_panel(self.form.kernel)
        self._wire_panels()
        self.panels_ready = True
        for key, splitter in self._splitters().items():
            state = self.settings.bytes(f"splitter/{key}")
            if state is not None:
                splitter.restoreState(state)
        self._refresh_compile_state()
        self.preview_controller.request(self.form.spec())
        self.panels_built.emit()

    def _wire(self) -> None:
        form = self.form
        form.spec_changed.connect(self._on_form_spec_changed)
        form.problems_changed.connect(self._on_form_problems_changed)
        self.compile_action.triggered.connect(self.compile)
        self.cancel_action.triggered.connect(self.cancel)
        self.open_action.triggered.connect(self._on_open_action_triggered)
        self.save_action.triggered.connect(self._on_save_action_triggered)
        self.workdir_action.triggered.connect(self._on_workdir_action_triggered)
        self.workdir_edit.editingFinished.connect(self._on_workdir_edit_editing_finished)
        self.quit_action.triggered.connect(self.close)
        for name, action in self.preset_actions.items():
            action.triggered.connect(lambda _checked=False, name=name: self.apply_preset(name))
        self.doctor_status.gathered.connect(self._on_doctor_status_gathered)

    def _wire_panels(self) -> None:
        preview, ctl = self.preview_controller, self.controller
        preview.torch_loaded.connect(self._on_preview_controller_torch_loaded)
        preview.computing.connect(self._on_preview_controller_computing)
        preview.computed.connect(self._on_preview_controller_computed)
        preview.failed.connect(self._on_preview_controller_failed)
        preview.checked.connect(self._on_preview_controller_checked)
        self.form.kernel_changed.connect(self._on_form_kernel_changed)
        ctl.started.connect(self._on_controller_started)
        ctl.lines_received.connect(self.compile_panel.log_view.append_lines)
        ctl.event_received.connect(self.compile_panel.show_event)
        ctl.job_started.connect(self.compile_panel.show_job_started)
        ctl.job_finished.connect(self._on_controller_job_finished)
        ctl.finished.connect(self._on_controller_finished)
        self.compile_panel.job_activated.connect(self._on_compile_panel_job_activated)
        self.artifacts.spec_requested.connect(self._on_artifacts_spec_requested)

    # ---- settings ----

    def _restore(self) -> None:
        s = self.settings
        geometry = s.bytes("window/geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1500, 940)
        state = s.bytes("window/state")
        if state is not None:
            self.restoreState(state)
        main = s.bytes("splitter/main")
        if main is not None:
            self.splitter.restoreState(main)
        workdir = s.text("workdir")
        self.set_workdir(Path(workdir) if workdir else self.workdir, rescan=False)
        spec = None
        text = s.text("spec/toml")
        if text:
            try:
                spec = loads_toml(text, "the last spec")
            except SpecError:
                spec = None  # a spec from an older version that no longer loads: start from the preset
        self.form.set_spec(spec or load_preset(DEFAULT_PRESET))
        self.tabs.setCurrentIndex(max(0, min(2, s.number("window/tab", PREVIEW_TAB))))

    def _splitters(self) -> dict[str, QSplitter]:
        if not self.panels_ready:
            return {}
        out = {"compile": self.compile_panel.splitter, "compile_results": self.compile_panel.vsplitter,
               "log": self.compile_panel.log_view.splitter, "artifacts": self.artifacts.splitter}
        # Each kernel's preview keeps its own splitters (the default kernel's under the keys it always had).
        for name, panel in self.preview_panels.items():
            prefix = "preview" if name == registry.DEFAULT else f"preview_{name}"
            for attr, suffix in (("splitter", ""), ("lower_splitter", "_lower")):
                if isinstance(getattr(panel, attr, None), QSplitter):
                    out[prefix + suffix] = getattr(panel, attr)
        return out

    def save_settings(self) -> None:
        s = self.settings
        s.set_bytes("window/geometry", self.saveGeometry())
        s.set_bytes("window/state", self.saveState())
        s.set_bytes("splitter/main", self.splitter.saveState())
        for key, splitter in self._splitters().items():
            s.set_bytes(f"splitter/{key}", splitter.saveState())
        s.set_text("workdir", str(self.workdir))
        s.set_text("spec/toml", self._spec_for_file_text())
        s.set_number("window/tab", self.tabs.currentIndex())
        s.sync()

    def _spec_for_file_text(self) -> str:
        from neffbench.spec import dumps_toml

        return dumps_toml(self.current_spec())

    # ---- public operations (the actions' targets, and what tests drive) ----

    def current_spec(self):
        """The form's spec with the toolbar's workdir."""
        return dataclasses.replace(self.form.spec(), workdir=str(self.workdir))

    def apply_preset(self, name: str) -> None:
        self.form.set_spec(load_preset(name))
        self.statusBar().showMessage(f"Preset {name} loaded; the workdir is unchanged.", 5000)

    def open_spec(self, path: str | Path) -> bool:
        try:
            spec = load(path)
        except SpecError as exc:
            QMessageBox.warning(self, "Cannot open spec", str(exc))
            return False
        self.form.set_spec(spec)
        self.statusBar().showMessage(f"Opened {path}; the workdir is unchanged.", 5000)
        return True

    def save_spec(self, path: str | Path) -> Path:
        saved = save(self.current_spec(), path)
        self.statusBar().showMessage(f"Saved {saved}", 5000)
        return saved

    def set_workdir(self, path: str | Path, *, rescan: bool = True) -> None:
        self.workdir = Path(path).expanduser().absolute()
        self.workdir_edit.setText(str(self.workdir))
        if self.panels_ready:
            self.artifacts.workdir = self.workdir
            self._refresh_compile_state()
            if rescan:
                self.artifacts.rescan()

    def compile(self) -> None:
        if not self.panels_ready or self.controller.is_running or self.form.errors():
            return
        self.controller.start(self.current_spec(), self.workdir)

    def cancel(self) -> None:
        if self.panels_ready and self.controller.is_running:
            self.controller.cancel()
            self.cancel_action.setEnabled(False)
            self.compile_panel.state_label.setText("Cancelling: the job is being stopped…")

    def start_background(self) -> None:
        """Work that waits until the window is on screen: torch, the toolchain check, the workdir scan."""
        self.preview_controller.load_torch()
        self.doctor_status.gather()
        self.artifacts.rescan()

    # ---- slots ----

    def _on_first_paint_painted(self) -> None:
        self.first_painted.emit()
        # After this paint has reached the screen: the tabs' contents, then the slow things in the background.
        QTimer.singleShot(0, self._after_first_paint)

    def _after_first_paint(self) -> None:
        self.build_panels()
        if self.background:
            self.start_background()

    def _on_form_spec_changed(self, spec) -> None:
        self.setWindowTitle(f"{spec.name} — {TITLE}")
        if self.panels_ready:
            combo = getattr(self.preview_panel, "bucket_combo", None)
            self.preview_controller.request(spec, combo.currentData() if combo is not None else None)

    def _on_form_problems_changed(self, _problems: list) -> None:
        self._refresh_compile_state()

    def _refresh_compile_state(self) -> None:
        self._update_compile_action()
        if self.panels_ready:
            self.compile_panel.show_plan(self.form.spec(), str(self.workdir), self.doctor_status.backend)

    def _update_compile_action(self) -> None:
        errors = self.form.errors()
        running = self.panels_ready and self.controller.is_running
        self.compile_action.setEnabled(self.panels_ready and not running and not errors)
        if not self.panels_ready:
            tip = "Starting up…"
        elif running:
            tip = "A compile is running; Cancel (Esc) stops it."
        elif errors:
            lines = [f"• {p.field}: {p.message}" for p in errors[:6]]
            more = f"\n… and {len(errors) - 6} more" if len(errors) > 6 else ""
            tip = f"Fix {len(errors)} error{'s' if len(errors) > 1 else ''} in the form first:\n" + "\n".join(lines) + more
        else:
            backend = self.doctor_status.backend
            what = " (cpu-check: a CPU trace, no NEFF)" if backend == "cpu-check" else ""
            tip = f"Compile every bucket of the spec{what} (Ctrl+Return)"
        self.compile_action.setToolTip(tip)
        self.compile_button.setToolTip(tip)

    def _on_preview_controller_torch_loaded(self, version: str) -> None:
        self.statusBar().showMessage(f"torch {version} loaded", 3000)
        # Start-up is over: keep the collector from walking torch's, Qt's and pyqtgraph's objects again
        # (a full collection over them stalls the event loop for ~100 ms; they live as long as the app).
        gc.freeze()

    @property
    def preview_panel(self) -> QWidget:
        """The Preview tab's panel of the kernel in the form."""
        return self.preview_panels[self.form.kernel]

    def _show_preview_panel(self, kernel_name: str) -> None:
        """The kernel's own preview panel (``Kernel.gui_preview``) or the generic one, built on first use."""
        if kernel_name not in self.preview_panels:
            import pkgutil

            target = registry.get(kernel_name).gui_preview or "neffbench.gui.kernel_preview:KernelPreviewPanel"
            panel = pkgutil.resolve_name(target)()
            if hasattr(panel, "bucket_chosen"):
                panel.bucket_chosen.connect(self._on_preview_panel_bucket_chosen)
            if hasattr(panel, "check_requested"):
                panel.check_requested.connect(self._on_preview_panel_check_requested)
            self.preview_panels[kernel_name] = panel
            self.preview_stack.addWidget(panel)
        self.preview_stack.setCurrentWidget(self.preview_panels[kernel_name])

    def _on_form_kernel_changed(self, name: str) -> None:
        if self.panels_ready:
            self._show_preview_panel(name)
        wanted = getattr(self.form.current(), "preferred_width", 0)
        sizes = self.splitter.sizes()
        if wanted and sizes[0] < wanted and sum(sizes) > 2 * wanted:
            self.splitter.setSizes([wanted, sum(sizes) - wanted])

    def _on_preview_controller_computing(self) -> None:
        self.preview_panel.show_status("Updating the preview…")

    def _on_preview_controller_computed(self, preview) -> None:
        from neffbench.gui.preview_controller import NO_PREVIEW

        if preview is None:
            self.preview_panel.show_status(NO_PREVIEW)
        else:
            self.preview_panel.show_preview(preview)

    def _on_preview_controller_failed(self, message: str) -> None:
        self.preview_panel.show_invalid(message)

    def _on_preview_controller_checked(self, report: dict) -> None:
        show = getattr(self.preview_panel, "show_check", None)
        if show is not None:
            show(report)

    def _on_preview_panel_bucket_chosen(self, bucket: int) -> None:
        self.preview_controller.request(self.form.spec(), bucket)

    def _on_preview_panel_check_requested(self) -> None:
        if self.form.errors():
            self.preview_panel.show_invalid("Fix the form's errors first: the CPU check needs a valid spec.")
            return
        running = getattr(self.preview_panel, "show_check_running", None)
        if running is not None:
            running()
        self.preview_controller.request_check(self.current_spec())

    def _on_open_action_triggered(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open spec", str(self.workdir.parent),
                                              "Spec files (*.toml *.json);;All files (*)")
        if path:
            self.open_spec(path)

    def _on_save_action_triggered(self) -> None:
        suggested = str(self.workdir.parent / f"{self.form.spec().name}.toml")
        path, _ = QFileDialog.getSaveFileName(self, "Save spec", suggested, "TOML spec (*.toml);;JSON spec (*.json)")
        if path:
            self.save_spec(path)

    def _on_workdir_action_triggered(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose workdir", str(self.workdir))
        if path:
            self.set_workdir(path)

    def _on_workdir_edit_editing_finished(self) -> None:
        text = self.workdir_edit.text().strip()
        if text and Path(text).expanduser().absolute() != self.workdir:
            self.set_workdir(text)

    def _on_controller_started(self, spec) -> None:
        status = self.doctor_status
        hint = ""
        if status.backend == "cpu-check":
            hint = "Backend cpu-check: the Neuron toolchain is not installed here, so no NEFF will be made."
        self.compile_panel.reset_style()
        self.compile_panel.show_started(spec, hint)
        self.cancel_action.setEnabled(True)
        self._update_compile_action()
        self.tabs.setCurrentIndex(COMPILE_TAB)
        from superqt.utils import create_worker

        from neffbench.jobs.records import last_duration

        self._duration_worker = create_worker(
            last_duration, spec.workdir, spec, status.backend,
            _connect={"returned": self.compile_panel.show_last_duration}, _ignore_errors=True)

    def _on_controller_job_finished(self, result) -> None:
        self.compile_panel.show_job_finished(result)
        self.artifacts.rescan()

    def _on_controller_finished(self, run) -> None:
        self.compile_panel.show_finished(run)
        self.cancel_action.setEnabled(False)
        self._update_compile_action()
        self.statusBar().showMessage(run.headline, 5000)
        if self._close_when_idle:
            self.close()

    def _on_compile_panel_job_activated(self, job_dir: str) -> None:
        self.tabs.setCurrentIndex(ARTIFACTS_TAB)
        self.artifacts.select(job_dir)

    def _on_artifacts_spec_requested(self, spec) -> None:
        self.form.set_spec(spec)
        self.statusBar().showMessage(f"Loaded the spec of a job ({spec.name}); the workdir is unchanged.", 5000)

    def _on_doctor_status_gathered(self, _facts) -> None:
        self._refresh_compile_state()

    # ---- closing ----

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if self.panels_ready and self.controller.is_running:
            if not self._close_when_idle:
                answer = QMessageBox.question(self, "Compile running", "A compile is running. Cancel it and quit?")
                if answer != QMessageBox.StandardButton.Yes:
                    event.ignore()
                    return
                self._close_when_idle = True
                self.cancel()
            event.ignore()  # closes when the controller reports the job has ended
            return
        self.save_settings()
        from neffbench.probe.client import close_shared

        close_shared()  # the warm probe, if Resolve or a CPU check started one
        event.accept()

