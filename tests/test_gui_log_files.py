"""A job's log files open whole in the window (no desktop application needed, as on a remote box): the compile
tab's "Whole log…" and the Artifacts tab's "Logs…" both show them, every line, searchable."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from neffbench.gui.compile.log_files_window import LogFilesWindow
from neffbench.jobs.log_files import log_files
from tests.test_gui_artifacts import make_job, scan

pytestmark = pytest.mark.gui

LINES = 60_000  # three times what the view's backlog holds: a file fed at once would lose most of them


def _job(job_dir: Path) -> Path:
    (job_dir / "compiler").mkdir(parents=True, exist_ok=True)
    (job_dir / "runs" / "r1").mkdir(parents=True)
    (job_dir / "model" / "a" / "b").mkdir(parents=True)
    lines = [f"2026-12-05T10:00:00Z INFO 1 [root]: line {i}" for i in range(LINES)]
    lines[LINES // 2] = "2026-12-05T10:00:00Z ERROR 1 [root]: [NCC_EVRF001] an error halfway"
    (job_dir / "job.log").write_text("\n".join(lines) + "\n")
    (job_dir / "events.jsonl").write_text('{"event": "started"}\n{"event": "finished"}\n')
    (job_dir / "compiler" / "log-neuron-cc.txt").write_text("compiler says\n")
    (job_dir / "runs" / "r1" / "run.log").write_text("ran\n")
    (job_dir / "model" / "a" / "b" / "deep.txt").write_text("not a log\n")
    return job_dir


def test_a_jobs_log_files_known_first_then_the_rest(tmp_path):
    job = _job(tmp_path / "job")
    assert [str(p) for p in log_files(job)] == [
        "job.log",
        "events.jsonl",
        "compiler/log-neuron-cc.txt",
        "runs/r1/run.log",
    ]


def test_the_whole_file_is_shown_every_line_and_searchable(qtbot, tmp_path):
    job = _job(tmp_path / "job")
    window = LogFilesWindow()
    qtbot.addWidget(window)
    window.show_job(job)
    qtbot.waitUntil(lambda: not window.reading, timeout=60_000)
    view = window.view
    assert (view.received, view.skipped) == (LINES, 0)
    assert view.text.document().blockCount() == LINES
    assert [window.files.itemText(i) for i in range(window.files.count())][:2] == ["job.log", "events.jsonl"]
    assert view.codes_list.count() == 1 and "NCC_EVRF001" in view.codes_list.item(0).text()
    view.search_edit.setText("line 59999")
    qtbot.keyClick(view.search_edit, Qt.Key.Key_Return)
    assert view.text.textCursor().selectedText() == "line 59999"
    window.files.setCurrentText("events.jsonl")
    qtbot.waitUntil(lambda: not window.reading, timeout=10_000)
    assert view.text.toPlainText() == '{"event": "started"}\n{"event": "finished"}'
    assert window.windowTitle() == "Logs of job"


def test_whole_log_and_artifacts_logs_open_the_window_not_the_desktop(window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtGui import QDesktopServices

    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: pytest.fail(f"asked the desktop for {url}"))
    workdir = tmp_path / "workdir"
    job = _job(make_job(workdir, "job-a"))
    panel = window.panels.compile
    panel.log_view.set_log_path(job / "job.log")
    qtbot.mouseClick(panel.log_view.open_log_button, Qt.MouseButton.LeftButton)
    logs = window.findChild(LogFilesWindow, "logFilesWindow")
    assert logs is not None and logs.isVisible() and logs.files.currentText() == "job.log"
    logs.close()

    artifacts = window.panels.artifacts
    scan(qtbot, artifacts)
    artifacts.list.topLevelItem(0).setSelected(True)
    qtbot.mouseClick(artifacts.buttons["logs"], Qt.MouseButton.LeftButton)
    assert logs.isVisible() and logs.job_dir == job
    qtbot.waitUntil(lambda: not logs.reading, timeout=60_000)
    assert logs.view.received == LINES
