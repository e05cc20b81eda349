"""Screenshots of every tab and dialog at the window sizes people use, for people to look at.

``python -m tests.screenshots OUT_DIR [--sizes 1920x1080,1280x800,1024x700]`` first fills a workdir in
OUT_DIR with what the tabs show (a cpu-check compile of the seed, a CPU run of it, a swept and run
sweep, a layer-by-layer compare, a 32-layer Llama-shaped model built from a config), then opens the window under
Xvfb (``xvfb-run``) once per size, screen and window of that size, and saves ``OUT_DIR/<size>/<NN>-<what>.png``:
each tab, each kernel's form and preview, a compile in the window, the sweep dialog, the Structure tab on the
seed and on the 32-layer model.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZES = ((1920, 1080), (1280, 800), (1024, 700))


def _neffbench(workdir: Path, *args: str, ok: tuple[int, ...] = (0,)) -> None:
    command = [sys.executable, "-m", "neffbench", *args]
    done = subprocess.run(command, cwd=workdir.parent, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def prepare(workdir: Path) -> Path:
    """The seed compiled (cpu-check), run on the CPU, swept and compared; returns its job directory."""
    if not workdir.is_dir():
        common = ("--backend", "cpu-check", "--workdir", str(workdir))
        _neffbench(workdir, "compile", "seed", *common)
        _neffbench(workdir, "sweep", "seed", "--over", "inputs.num_tokens=1,8", "--over", "compiler.optlevel=1,2",
                   "--run", *common)  # fmt: skip
    job = min(p.parent for p in workdir.glob("seed-*/job.json"))
    if not (job / "runs").is_dir():
        _neffbench(workdir, "run", str(job), "--runtime", "cpu", "--iterations", "300")
    if not (job / "compares").is_dir():
        _neffbench(workdir, "compare", str(job), "--runtime", "cpu", ok=(0, 3))  # 3: a tap diverges
    if not list(workdir.glob("llama32-*/job.json")):
        from neffbench.spec import from_dict, save
        from tests.bench.bench_structure import LLAMA

        save(from_dict({**LLAMA, "workdir": str(workdir)}), workdir.parent / "llama32.toml")
        _neffbench(workdir, "compile", str(workdir.parent / "llama32.toml"), "--backend", "cpu-check")
    return job


def llama_job(workdir: Path) -> Path:
    return min(p.parent for p in workdir.glob("llama32-*/job.json"))


class _Shooter:
    """Walks the window through its tabs, one step per event-loop turn, saving a PNG at each."""

    def __init__(self, app, window, out: Path, job: Path):
        self.app, self.window, self.out, self.job = app, window, out, job
        self.count = 0
        self.failures: list[str] = []

    def save(self, what: str, widget=None) -> None:
        self.app.processEvents()  # a script taking pictures, not a GUI serving a user
        self.count += 1
        (widget or self.window).grab().save(str(self.out / f"{self.count:02d}-{what}.png"))

    def wait(self, done, then, timeout_ms: int = 120_000, *, enough_ms: int | None = None) -> None:
        """``then()`` once ``done()``; after ``enough_ms`` also without (a panel that may stay empty)."""
        from PySide6.QtCore import QElapsedTimer, QTimer

        clock = QElapsedTimer()
        clock.start()

        def poll() -> None:
            if done() or (enough_ms is not None and clock.elapsed() > enough_ms):
                QTimer.singleShot(400, then)  # painted, autoranged, laid out
            elif clock.elapsed() > timeout_ms:
                self.failures.append(f"timed out before {getattr(then, '__name__', then)}")
                self.app.quit()
            else:
                QTimer.singleShot(50, poll)

        poll()

    def tab(self, index: int) -> None:
        self.window.tabs.setCurrentIndex(index)
        self.app.processEvents()

    # ---- the steps ----

    def start(self) -> None:
        w = self.window
        self.wait(lambda: getattr(w.preview_panel, "preview", None) is not None, self.preview_rope)

    def preview_rope(self) -> None:
        self.tab(0)
        self.save("preview-rope-seed")
        self.window.apply_preset("llama3.1-8b")
        self.wait(lambda: getattr(self.window.preview_panel.preview, "spec", None).name == "llama3.1-8b", self.llama)

    def llama(self) -> None:
        self.save("preview-rope-llama3.1-8b")
        self.kernels = [name for name in self.window.form._kernels if name != "rope"]
        self.next_kernel()

    def next_kernel(self) -> None:
        from neffbench.kernels import registry

        if not self.kernels:
            self.window.apply_preset("seed")
            self.wait(lambda: self.window.form.kernel == "rope", self.compile)
            return
        name = self.kernels.pop(0)
        self.window.form.set_spec(registry.get(name).default_spec())
        panel = self.window.preview_stack

        def shown() -> bool:
            return self.window.form.kernel == name and getattr(panel.panel, "preview", True) is not None

        def shoot() -> None:
            self.save(f"preview-{name}")
            self.next_kernel()

        self.wait(shown, shoot, enough_ms=8_000)  # the module kernel previews nothing until it has an entry

    def compile(self) -> None:
        w = self.window
        w.recompile()  # not from the cache: a whole log streams in
        self.wait(lambda: w.panels.compile.log_view.shown > 3, self.compiling)

    def compiling(self) -> None:
        self.save("compile-running")
        self.wait(lambda: not self.window.controllers.compile.is_running, self.compiled)

    def compiled(self) -> None:
        self.tab(1)
        self.save("compile")
        self.window.panels.compile.log_tabs.setCurrentIndex(1)
        self.save("compile-explanation")
        self.window.panels.compile.log_tabs.setCurrentIndex(0)
        self.tab(2)
        self.window.panels.artifacts.rescan()
        self.wait(lambda: self.window.panels.artifacts.list.topLevelItemCount() > 0, self.artifacts)

    def artifacts(self) -> None:
        self.window.panels.artifacts.select(str(self.job))
        self.save("artifacts")
        self.tab(3)
        self.window.panels.run.set_target(str(self.job))
        self.wait(lambda: self.window.panels.run.table.rowCount() > 0, self.run)

    def run(self) -> None:
        self.save("run")
        panel = self.window.panels.run
        for index in range(1, panel.tabs.count()):
            panel.tabs.setCurrentIndex(index)
            self.save(f"run-{panel.tabs.tabText(index).lower()}")
        panel.tabs.setCurrentIndex(0)
        self.tab(4)
        self.wait(lambda: self.window.panels.sweeps.panel.model.rowCount() > 0, self.sweeps)

    def sweeps(self) -> None:
        panel = self.window.panels.sweeps.panel
        panel.table.selectRow(0)
        flags = panel.table.selectionModel().SelectionFlag
        panel.table.selectionModel().select(panel.proxy.index(3, 0), flags.Select | flags.Rows)
        panel.diff_selected()
        self.save("sweeps")
        self.tab(5)
        self.window.panels.numerics.set_job(str(self.job))
        self.wait(lambda: self.window.panels.numerics.scan is not None, self.numerics)

    def numerics(self) -> None:
        self.save("numerics")
        self.tab(6)
        self.show_structure(str(self.job), "", "structure-rope", self.structure_llama)

    def show_structure(self, job: str, path: str, what: str, then) -> None:
        """The Structure tab on ``job`` with ``path`` picked, its data flow drawn, saved as ``what``."""
        panel = self.window.panels.structure
        drawn: list[str] = []
        panel.drawn.connect(drawn.append)
        if panel.job_dir != job or path == "":
            panel.set_job(job)  # read anew: the root drawn again even when the window showed this job already
        else:
            panel.select_path(path)

        def shoot() -> None:
            panel.drawn.disconnect(drawn.append)
            self.save(what)
            then()

        self.wait(lambda: path in drawn and panel.selected_path() == path or (path == "" and "" in drawn), shoot)

    def structure_llama(self) -> None:
        job = str(llama_job(self.job.parent))
        self.show_structure(job, "", "structure-llama32", self.structure_layer)

    def structure_layer(self) -> None:
        job = self.window.panels.structure.job_dir
        self.show_structure(job, "model.layers.0", "structure-llama32-layer", self.structure_model)

    def structure_model(self) -> None:
        job = self.window.panels.structure.job_dir
        self.show_structure(job, "model", "structure-llama32-model", self.dialogs)

    def dialogs(self) -> None:
        from neffbench.gui.sweeps.dialog import SweepDialog

        w = self.window
        dialog = SweepDialog(w.current_spec(), w, backend=w.controllers.compile.backend)
        dialog.show()
        self.app.processEvents()
        self.save("dialog-sweep", dialog)
        dialog.reject()
        self.app.quit()


def shoot(out: Path, size: tuple[int, int], workdir: Path, job: Path) -> int:
    from PySide6.QtCore import QTimer

    from neffbench.gui.shell.launch import make_app
    from neffbench.gui.shell.main_window import MainWindow
    from neffbench.gui.shell.settings import Settings

    out.mkdir(parents=True, exist_ok=True)
    app = make_app(["neffbench"])
    window = MainWindow(Settings.at(out / "settings.ini"), defer_panels=True)
    window.set_workdir(workdir, rescan=False)
    window.setGeometry(0, 0, *size)  # no window manager under Xvfb: the window is the screen
    window.show()
    shooter = _Shooter(app, window, out, job)
    window.panels_built.connect(shooter.start)
    QTimer.singleShot(600_000, lambda: (shooter.failures.append("timed out"), app.quit()))
    app.exec()
    for message in shooter.failures:
        print(message, file=sys.stderr)
    return 1 if shooter.failures else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    parser.add_argument("--shoot", help=argparse.SUPPRESS)  # one size, inside xvfb-run
    args = parser.parse_args(argv)
    out = args.out.absolute()
    workdir = out / "workdir"
    if args.shoot:
        w, h = (int(v) for v in args.shoot.split("x"))
        return shoot(out / args.shoot, (w, h), workdir, prepare(workdir))
    out.mkdir(parents=True, exist_ok=True)
    prepare(workdir)
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    failed = 0
    for size in args.sizes.split(","):
        screen = f"-screen 0 {size}x24"
        command = ["xvfb-run", "-a", "-s", screen, sys.executable, "-m", "tests.screenshots", str(out), "--shoot", size]
        failed |= subprocess.run(command, cwd=REPO, env=env, check=False, timeout=900).returncode
        print(f"{out / size}: {len(list((out / size).glob('*.png')))} screenshots")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
