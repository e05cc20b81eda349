"""The whole workbench under Xvfb (a real X server, the xcb platform): launched, compiled, and photographed.

Also a script: ``xvfb-run -a -s "-screen 0 1600x1000x24" python -m tests.test_gui_xvfb OUT_DIR [--compile]``
saves ``screen.png`` (the X root window) and one PNG per tab, for people to look at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TABS = ("preview", "compile", "artifacts")


def _shoot(out: Path, compile_too: bool) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QGuiApplication

    from neffbench.gui.shell.launch import make_app
    from neffbench.gui.shell.main_window import MainWindow, app_icon
    from neffbench.gui.shell.settings import Settings

    app = make_app(["neffbench"])
    app.setWindowIcon(app_icon())
    window = MainWindow(Settings.at(out / "settings.ini"), defer_panels=True)  # as launch() opens it
    window.set_workdir(out / "workdir", rescan=False)
    window.apply_preset("llama3.1-8b")
    # Two buckets, so that Artifacts has two NEFFs to compare.
    window.form.editor("inputs.num_tokens").widget.setText("128, 256")
    window.form.editor("inputs.num_tokens").edited.emit()
    window.setGeometry(0, 0, 1600, 1000)
    window.show()
    failures: list[str] = []

    def save_tabs(suffix: str) -> None:
        for index, name in enumerate(TABS):
            window.tabs.setCurrentIndex(index)
            app.processEvents()  # a script taking pictures, not a GUI serving a user
            window.grab().save(str(out / f"{name}{suffix}.png"))

    def after_compile(run) -> None:
        if run.outcome != "succeeded":
            failures.append(f"compile {run.outcome}")
        window.panels.artifacts.scanned.connect(lambda _n: QTimer.singleShot(300, finish_compiled))
        window.panels.artifacts.rescan()

    def finish_compiled() -> None:
        window.panels.artifacts.scanned.disconnect()
        if window.panels.artifacts.artifacts:
            window.panels.artifacts.select(window.panels.artifacts.artifacts[0].key)
        save_tabs("-after-compile")
        neffs = [
            i
            for i in range(window.panels.artifacts.list.topLevelItemCount())
            if window.panels.artifacts.artifacts[i].neff is not None
        ][:2]
        if len(neffs) == 2:
            for i in neffs:
                window.panels.artifacts.list.topLevelItem(i).setSelected(True)
            app.processEvents()
            window.grab().save(str(out / "artifacts-diff.png"))
        app.quit()

    def first_preview(_preview) -> None:
        window.preview_controller.computed.disconnect(first_preview)
        if window.panels_ready:
            QTimer.singleShot(500, shoot)  # after the plots have been painted
        else:  # the first preview comes before the other tabs are built
            window.panels_built.connect(lambda: QTimer.singleShot(500, shoot))

    def shoot() -> None:
        QGuiApplication.primaryScreen().grabWindow(0).save(str(out / "screen.png"))
        save_tabs("")
        if not compile_too:
            app.quit()
            return
        window.controllers.compile.finished.connect(after_compile)
        window.compile()

    # As launch() opens it, the controller exists from the start (it asks the warm probe for the first preview).
    window.preview_controller.computed.connect(first_preview)
    window.preview_controller.failed.connect(lambda msg: (failures.append(msg), app.quit()))
    QTimer.singleShot(180_000, lambda: (failures.append("timed out"), app.quit()))
    app.exec()
    window.save_settings()
    for message in failures:
        print(message, file=sys.stderr)
    return 1 if failures else 0


@pytest.mark.gui
@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("xvfb-run"), reason="xvfb-run is not installed (apt-get install xvfb xauth)")
def test_the_window_under_xvfb_after_a_compile(tmp_path):
    from PySide6.QtGui import QImage

    from tests.fakes import fake_env

    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env.update(fake_env("success"))
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "runtime")
    (tmp_path / "runtime").mkdir(mode=0o700)
    proc = subprocess.run(
        [
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1600x1000x24",
            sys.executable,
            "-m",
            "tests.test_gui_xvfb",
            str(tmp_path),
            "--compile",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    screen = QImage(str(tmp_path / "screen.png"))
    assert (screen.width(), screen.height()) == (1600, 1000)
    for name in [*TABS, *(f"{t}-after-compile" for t in TABS)]:
        image = QImage(str(tmp_path / f"{name}.png"))
        assert not image.isNull(), name
        # Not a blank window: many distinct colours across a coarse grid.
        colours = {image.pixel(x, y) for x in range(0, image.width(), 23) for y in range(0, image.height(), 23)}
        assert len(colours) > 20, name
    print(f"screenshots in {tmp_path}")


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    sys.exit(_shoot(target, "--compile" in sys.argv[2:]))
