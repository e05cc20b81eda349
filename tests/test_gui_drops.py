"""Drops on the window, whichever widget is under the cursor, go to its one handler: a spec opens, a compiler log
is explained, anything else is refused in one sentence; no text field or log view takes the file itself."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from neffbench.compilerlog.explain import not_a_log

pytestmark = [pytest.mark.gui]
CORPUS = Path(__file__).parent / "data" / "compiler_logs"
# A 1x1 PNG: what a screenshot dropped by mistake looks like to the workbench.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _drop(window, widget, path: Path) -> bool:
    """Drag ``path`` over ``widget`` and drop it, as the platform delivers it: to the window's QWindow."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    mime.setText(str(path))  # file managers offer the path as text too: what a line edit would insert
    at = widget.mapTo(window, QPoint(5, 5))
    handle = window.windowHandle()
    action, buttons, mods = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(at, action, mime, buttons, mods)
    QCoreApplication.sendEvent(handle, enter)
    drop = QDropEvent(QPointF(at), action, mime, buttons, mods, QEvent.Type.Drop)
    QCoreApplication.sendEvent(handle, drop)
    return drop.isAccepted()


def test_not_a_log_tells_logs_from_other_files(tmp_path):
    assert all(not_a_log(p) is None for p in CORPUS.glob("*.log"))
    image = tmp_path / "shot.png"
    image.write_bytes(PNG)
    assert not_a_log(image) == "shot.png is not text (an image or other binary file)"
    code = tmp_path / "notes.py"
    code.write_text("print('hello')\n")
    assert "does not read as compiler output" in not_a_log(code)
    assert "is a directory without a job.log" in not_a_log(tmp_path)


def test_a_file_dropped_on_a_text_field_leaves_the_field_alone(window, tmp_path):
    window.build_panels()
    name = window.form.editor("name").widget
    before = name.text()
    log = tmp_path / "run.log"
    log.write_text((CORPUS / "job_log_neffbench.log").read_text())
    assert _drop(window, name, log)
    assert name.text() == before
    assert window.panels.compile.log_tabs.currentWidget() is window.panels.compile.explanation


def test_a_dropped_image_is_refused_in_one_sentence(window, qtbot, tmp_path):
    window.build_panels()
    view = window.panels.compile.explanation
    image = tmp_path / "shot.png"
    image.write_bytes(PNG)
    before = view.headline.text()
    _drop(window, view.body, image)  # over the Explanation pane itself, which used to explain anything
    message = window.statusBar().currentMessage()
    assert message.startswith("Not opened: shot.png is not text") and "a spec (.toml)" in message
    assert message.count(".") <= 3 and message.endswith("instead.")
    assert view.headline.text() == before and view.data is None
    workdir = window.workdir_edit
    _drop(window, workdir, image)
    assert workdir.text() == str(window.workdir)


def test_a_spec_dropped_anywhere_opens_in_the_form(window, tmp_path):
    from neffbench.presets import preset_text

    window.build_panels()
    spec = tmp_path / "mine.toml"
    spec.write_text(preset_text("seed").replace('name = "seed"', 'name = "dropped"'))
    _drop(window, window.form.editor("model.head_size").widget, spec)
    assert window.current_spec().name == "dropped"
