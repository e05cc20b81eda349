"""The window's tabs' contents: the panels and controllers built after the first paint, and their wiring."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from neffbench.gui.shell import cancel as window_cancel
from neffbench.gui.shell import logs as window_logs
from neffbench.gui.shell.tabs import (
    ARTIFACTS_TAB,
    COMPILE_TAB,
    NUMERICS_TAB,
    PREVIEW_TAB,
    RUN_TAB,
    STRUCTURE_TAB,
    SWEEPS_TAB,
)

if TYPE_CHECKING:  # imported as the panels are built, once the window has painted
    from neffbench.gui.artifacts.panel import ArtifactsPanel
    from neffbench.gui.compile.controller import CompileController
    from neffbench.gui.compile.panel import CompilePanel
    from neffbench.gui.numerics.controller import CompareController
    from neffbench.gui.numerics.panel import NumericsPanel
    from neffbench.gui.run.controller import RunController
    from neffbench.gui.run.panel import RunPanel
    from neffbench.gui.shell.sweeps import WindowSweeps
    from neffbench.gui.structure.panel import StructurePanel


@dataclass(frozen=True, eq=False)
class Controllers:
    """What runs a compile, a benchmark and a compare (a sweep's controller is the Sweeps tab's own)."""

    compile: CompileController
    run: RunController
    compare: CompareController


@dataclass(frozen=True, eq=False)
class Panels:
    """The Compile, Artifacts, Run, Sweeps, Numerics and Structure tabs' contents."""

    compile: CompilePanel
    artifacts: ArtifactsPanel
    run: RunPanel
    sweeps: WindowSweeps
    numerics: NumericsPanel
    structure: StructurePanel


def put(window, tab: int, panel) -> None:
    """``panel`` into its tab's page, in place of the page's "Starting up…" placeholder."""
    from neffbench.gui.widgets import wheel

    clear(window, tab)
    window._pages[tab].layout().addWidget(panel)
    wheel.guard_all(panel)


def clear(window, tab: int) -> None:
    from PySide6.QtWidgets import QLabel

    for placeholder in window._pages[tab].findChildren(QLabel, "tab-placeholder"):
        placeholder.hide()
        placeholder.deleteLater()


def build_preview(window) -> None:
    """The Preview tab's panel and its wiring: built first, so that the first preview is drawn before the other
    tabs are built (their modules are imported here, so the window paints first)."""
    from neffbench.gui.preview.controller import PreviewController
    from neffbench.gui.preview.host import PreviewHost

    if window.preview_controller is None:  # not already asking the probe for the first preview
        window.preview_controller = PreviewController(window)
    window.preview_stack = PreviewHost()
    put(window, PREVIEW_TAB, window.preview_stack)
    window.preview_stack.show_kernel(window.form.kernel)
    preview, host = window.preview_controller, window.preview_stack
    preview.torch_loaded.connect(window._on_preview_controller_torch_loaded)
    preview.computing.connect(host.show_computing)
    preview.computed.connect(host.show_result)
    preview.failed.connect(host.show_invalid)
    preview.checked.connect(host.show_check)
    host.bucket_chosen.connect(window._on_preview_stack_bucket_chosen)
    host.check_requested.connect(window._on_preview_stack_check_requested)
    host.keep_state_requested.connect(window._on_preview_stack_keep_state_requested)
    window.form.kernel_changed.connect(window._on_form_kernel_changed)


def build_controllers(window) -> Controllers:
    """What runs behind the tabs, each a child of the window."""
    from neffbench.gui.compile.controller import CompileController
    from neffbench.gui.numerics.controller import CompareController
    from neffbench.gui.run.controller import RunController

    return Controllers(compile=CompileController(window), run=RunController(window), compare=CompareController(window))


def build(window) -> Panels:
    """The Compile, Artifacts, Run, Sweeps, Numerics and Structure tabs' panels, each put in its tab."""
    from neffbench.gui.artifacts.panel import ArtifactsPanel
    from neffbench.gui.compile.panel import CompilePanel
    from neffbench.gui.run.panel import RunPanel
    from neffbench.gui.widgets import wheel

    compile_panel = CompilePanel()
    artifacts = ArtifactsPanel()
    artifacts.workdir = window.workdir
    run = RunPanel()
    for tab, panel in ((COMPILE_TAB, compile_panel), (ARTIFACTS_TAB, artifacts), (RUN_TAB, run)):
        put(window, tab, panel)
    from neffbench.gui.shell.sweeps import WindowSweeps

    clear(window, SWEEPS_TAB)
    sweeps = WindowSweeps(window, window._pages[SWEEPS_TAB], compile_panel)
    wheel.guard_all(window._pages[SWEEPS_TAB])
    from neffbench.gui.numerics.panel import NumericsPanel

    numerics = NumericsPanel()
    put(window, NUMERICS_TAB, numerics)
    from neffbench.gui.structure.panel import StructurePanel

    structure = StructurePanel()
    put(window, STRUCTURE_TAB, structure)
    return Panels(
        compile=compile_panel, artifacts=artifacts, run=run, sweeps=sweeps, numerics=numerics, structure=structure
    )


def wire(window) -> None:
    """The other panels' signals to their controllers and to the window's slots."""
    panels, controllers = window.panels, window.controllers
    ctl, compile_panel, artifacts = controllers.compile, panels.compile, panels.artifacts
    ctl.started.connect(window._on_controller_started)
    ctl.lines_received.connect(compile_panel.show_lines)
    ctl.event_received.connect(compile_panel.show_event)
    ctl.job_started.connect(compile_panel.show_job_started)
    ctl.job_finished.connect(window._on_controller_job_finished)
    ctl.finished.connect(window._on_controller_finished)
    compile_panel.job_activated.connect(window._on_compile_panel_job_activated)
    artifacts.spec_requested.connect(window._on_artifacts_spec_requested)
    artifacts.run_requested.connect(window._on_artifacts_run_requested)
    artifacts.deleted.connect(compile_panel.forget_job)
    artifacts.message.connect(lambda text: window.statusBar().showMessage(text, 6000))
    run, runs = panels.run, controllers.run
    run.run_requested.connect(runs.start)
    run.cancel_requested.connect(runs.cancel)
    runs.started.connect(run.show_started)
    runs.event_received.connect(run.show_event)
    runs.lines_received.connect(run.show_lines)
    runs.status_changed.connect(run.show_status)
    runs.finished.connect(run.show_finished)
    runs.failed.connect(run.show_failed)
    from neffbench.gui.numerics import panel as numerics

    numerics.wire(panels.numerics, controllers.compare)
    from neffbench.gui.structure import links

    links.wire(window)
    artifacts.compare_requested.connect(lambda job_dir: show_numerics(window, job_dir))
    run.compare_requested.connect(lambda job_dir: show_numerics(window, job_dir))
    run.chooser.start_dir = lambda: str(window.workdir)
    window.doctor_status.gathered.connect(run.set_host)
    if window.doctor_status.facts is not None:
        run.set_host(window.doctor_status.facts)
    window_logs.install(window)
    window_cancel.install(window)


def show_numerics(window, job_dir: str) -> None:
    """The Numerics tab on ``job_dir`` (a compare of another job running: it stays, and the status bar says so)."""
    numerics = window.panels.numerics
    if window.controllers.compare.is_running and numerics.job_dir != job_dir:
        window.statusBar().showMessage(
            "A compare is running; cancel it or wait for it before comparing another job.", 8000
        )
    elif numerics.job_dir == job_dir:
        numerics.rescan()
    else:
        numerics.set_job(job_dir)
    window.tabs.setCurrentIndex(NUMERICS_TAB)


def follow_workdir(window) -> None:
    """After a workdir change, the Numerics tab shows no job of the workdir before (unless its compare is running)."""
    numerics = window.panels.numerics
    shown = numerics.job_dir
    if shown and not window.controllers.compare.is_running and not Path(shown).is_relative_to(window.workdir):
        numerics.set_job(None)


def cancel_runs(window) -> None:
    """Stop a running benchmark and a running compare (as the window closes)."""
    for controller in (window.controllers.run, window.controllers.compare):
        if controller.is_running:
            controller.cancel()
