"""The log view: batched, capped, coloured by level, filtered, searched, codes listed, tail followed only at the bottom."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from neffbench.gui.compile.log_view import LogView
from neffbench.gui.widgets import theme

pytestmark = pytest.mark.gui


def line(i: int, level: str = "INFO", text: str = "") -> str:
    return f"2024-12-04T01:01:23Z {level} 10200 [root/Frontend]: message {i} {text}".rstrip()


@pytest.fixture
def view(qtbot):
    v = LogView(max_lines=1000)
    qtbot.addWidget(v)
    v.resize(900, 400)
    v.show()
    return v


def drained(view: LogView):
    return lambda: view.pending == 0


def test_many_lines_arrive_capped_and_the_count_is_kept(view, qtbot):
    view.append_lines([line(i) for i in range(5000)])
    qtbot.waitUntil(drained(view), timeout=10_000)
    doc = view.text.document()
    assert doc.blockCount() <= 1000
    assert view.received == 5000
    assert doc.lastBlock().text() == line(4999)
    assert "5,000 lines" in view.footer.text() and "last 1,000" in view.footer.text()


def test_levels_are_coloured_and_error_codes_listed(view, qtbot):
    view.append_lines(
        [
            line(0),
            line(1, "USER", "[NLA001] Unhandled exception"),
            line(2, "WARNING"),
            "plain text",
            line(4, "USER", "Frontend finished after 0.08 seconds"),
        ]
    )
    qtbot.waitUntil(drained(view), timeout=30_000)
    doc = view.text.document()
    colours = [doc.findBlockByNumber(i).begin().fragment().charFormat().foreground().color() for i in range(5)]
    assert colours[1] == QColor(theme.LEVEL_COLOURS["ERROR"])  # USER with an error code is an error
    assert colours[2] == QColor(theme.LEVEL_COLOURS["WARNING"])
    assert colours[4] == QColor(theme.LEVEL_COLOURS["USER"])  # USER progress is not
    assert view.codes_list.count() == 1 and view.codes_list.item(0).text().startswith("NLA001")


def test_clicking_a_code_jumps_to_its_line(view, qtbot):
    view.append_lines(
        [line(i) for i in range(300)] + [line(300, "ERROR", "[TEN404] bad")] + [line(i) for i in range(301, 600)]
    )
    qtbot.waitUntil(drained(view), timeout=30_000)
    view.text.moveCursor(view.text.textCursor().MoveOperation.Start)
    item = view.codes_list.item(0)
    with qtbot.waitSignal(view.code_activated):
        view.codes_list.itemClicked.emit(item)
    assert "TEN404" in view.text.textCursor().block().text()


def test_filter_by_level_keeps_only_what_is_asked(view, qtbot):
    view.append_lines([line(0, "DEBUG"), line(1), line(2, "WARNING"), line(3, "ERROR")])
    qtbot.waitUntil(drained(view), timeout=30_000)
    view.level_combo.setCurrentIndex(2)  # warnings and errors
    qtbot.waitUntil(drained(view), timeout=30_000)
    assert view.text.toPlainText().splitlines() == [line(2, "WARNING"), line(3, "ERROR")]
    view.append_lines([line(4, "INFO"), line(5, "ERROR")])
    qtbot.waitUntil(drained(view), timeout=30_000)
    assert view.text.toPlainText().splitlines()[-1] == line(5, "ERROR")
    view.level_combo.setCurrentIndex(0)
    qtbot.waitUntil(drained(view), timeout=30_000)
    assert len(view.text.toPlainText().splitlines()) == 6


def test_search_finds_and_wraps(view, qtbot):
    view.append_lines([line(i) for i in range(50)] + ["needle here"] + [line(i) for i in range(50)])
    qtbot.waitUntil(drained(view), timeout=30_000)
    view.search_edit.setText("needle")
    view.search_edit.returnPressed.emit()
    assert view.text.textCursor().selectedText() == "needle"
    view.search_edit.returnPressed.emit()  # wraps around to the same one
    assert view.text.textCursor().selectedText() == "needle"
    view.search_edit.setText("absent")
    view.search_edit.returnPressed.emit()
    assert view.search_status.text() == "not found"


def test_the_tail_is_followed_only_from_the_bottom(view, qtbot):
    bar = view.text.verticalScrollBar()
    view.append_lines([line(i) for i in range(200)])
    qtbot.waitUntil(drained(view), timeout=30_000)
    assert bar.value() == bar.maximum() > 0
    view.append_lines([line(i) for i in range(200, 400)])
    qtbot.waitUntil(drained(view), timeout=30_000)
    assert bar.value() == bar.maximum()
    bar.setValue(10)  # the user scrolls up to read
    view.append_lines([line(i) for i in range(400, 450)])
    qtbot.waitUntil(drained(view), timeout=30_000)
    assert bar.value() == 10 < bar.maximum()
