"""Nothing the user typed is replaced without asking: a preset, an opened spec or a job's spec over unsaved edits asks
first (Discard or Cancel); switching kernels keeps each kernel's values. And a workdir that cannot be one is refused
as it is entered, the tabs that show a workdir following the change."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from neffbench.presets import load_preset
from neffbench.spec import save

pytestmark = pytest.mark.gui


class Answer:
    """Clicks ``button`` on the next message box, from inside the event loop it runs; ``asked`` holds its text."""

    def __init__(self, button: QMessageBox.StandardButton, tries: int = 300):
        self.button, self.tries, self.asked = button, tries, []
        QTimer.singleShot(0, self._look)

    def _look(self) -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            self.asked.append(box.text())
            box.button(self.button).click()
        elif self.tries > 0:
            self.tries -= 1
            QTimer.singleShot(10, self._look)

    def stop(self) -> None:
        self.tries = 0


def _edit_optlevel(window, value: int = 3) -> None:
    window.form.editor("compiler.optlevel").widget.setValue(value)
    assert window.form.spec().compiler.optlevel == value


def test_a_preset_over_unsaved_edits_asks_and_cancel_keeps_them(window):
    window.apply_preset("seed")
    _edit_optlevel(window)
    answer = Answer(QMessageBox.StandardButton.Cancel)
    assert window.apply_preset("llama3.1-8b") is False
    assert answer.asked == [
        "The RoPE (vLLM rotary embedding) form has edits that are not saved. Loading the preset llama3.1-8b replaces them."
    ]
    assert window.form.spec().compiler.optlevel == 3 and window.form.spec().name == "seed"
    answer = Answer(QMessageBox.StandardButton.Discard)
    assert window.apply_preset("llama3.1-8b") is True
    assert answer.asked and window.form.spec() == load_preset("llama3.1-8b")
    # Nothing edited since: the next preset is loaded without a question.
    answer = Answer(QMessageBox.StandardButton.Cancel)
    assert window.apply_preset("seed") is True
    answer.stop()
    assert not answer.asked


def test_opening_a_spec_or_a_jobs_spec_over_unsaved_edits_asks(window, tmp_path):
    window.apply_preset("seed")
    path = window.save_spec(tmp_path / "mine.toml")
    assert window.open_spec(path)  # saved just now: nothing to lose, no question
    _edit_optlevel(window)
    answer = Answer(QMessageBox.StandardButton.Cancel)
    assert window.open_spec(path) is False
    assert answer.asked and window.form.spec().compiler.optlevel == 3
    answer = Answer(QMessageBox.StandardButton.Cancel)
    window._on_artifacts_spec_requested(load_preset("llama3.1-8b"))  # Artifacts' "Re-open spec"
    assert answer.asked and window.form.spec().compiler.optlevel == 3
    answer = Answer(QMessageBox.StandardButton.Discard)
    assert window.open_spec(path) is True
    assert answer.asked and window.form.spec().compiler.optlevel == load_preset("seed").compiler.optlevel


def test_switching_kernels_keeps_each_forms_edits_without_asking(window):
    window.apply_preset("seed")
    _edit_optlevel(window)
    combo = window.form.kernel_combo
    answer = Answer(QMessageBox.StandardButton.Cancel)
    for name in ("module", "rope"):
        combo.setCurrentIndex(combo.findData(name))
        combo.activated.emit(combo.currentIndex())
    answer.stop()
    assert not answer.asked
    assert window.form.kernel == "rope" and window.form.spec().compiler.optlevel == 3
    assert window.form.has_unsaved_edits("rope") and not window.form.has_unsaved_edits("module")


def test_a_workdir_that_cannot_be_one_is_refused_as_it_is_entered(window, tmp_path, qtbot):
    before = window.workdir
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    for typed, why in ((a_file, "is a file, not a folder"), (a_file / "wd", "is a file")):
        window.workdir_edit.setText(str(typed))
        window.workdir_edit.editingFinished.emit()
        assert window.workdir == before and window.workdir_edit.text() == str(before)
        assert why in window.statusBar().currentMessage() and str(before) in window.statusBar().currentMessage()
    assert not window.set_workdir(a_file)


def test_the_tabs_follow_a_workdir_change(window, tmp_path, qtbot):
    old = tmp_path / "old"
    spec = dataclasses.replace(load_preset("seed"), workdir=str(old))
    job = old / "seed-job"
    job.mkdir(parents=True)
    save(spec, job / "spec.toml")
    window.set_workdir(old)
    window.panels.numerics.set_job(str(job))
    new = tmp_path / "new"
    window.workdir_edit.setText(str(new))
    window.workdir_edit.editingFinished.emit()
    assert window.workdir == new
    assert window.panels.numerics.job_dir is None
    qtbot.waitUntil(lambda: str(new) in window.panels.artifacts.summary.text(), timeout=10_000)
    assert window.panels.artifacts.artifacts == []
