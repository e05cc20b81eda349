"""The compile log: lines are queued, parsed and inserted on a timer in small time-boxed batches,
capped in size (the full log is in the job's ``job.log``), coloured by level, filterable and searchable."""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontDatabase, QKeySequence, QShortcut, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from neffbench.compilerlog.codes import describe
from neffbench.compilerlog.lines import parse_line
from neffbench.gui.compile.traceback_fold import FOLDED, TracebackFolder
from neffbench.gui.widgets import theme
from neffbench.words import plural

# Lines kept in the view (and for filtering); older ones are only in job.log.
MAX_LINES = 50_000
# Lines waiting to be parsed and shown. When output arrives faster than the view can show it (about
# 75,000 lines a second), older waiting lines are skipped: they would scroll past unread, and job.log
# has every one. About a quarter of a second behind at most.
MAX_BACKLOG = 20_000
# Per timer tick, stop inserting after this long so the event loop never stalls.
TICK_BUDGET_S = 0.012
# While lines keep arriving, pause this long between ticks: the thread delivering them needs the GIL
# too, and the newest lines matter more than every line in between.
STREAMING_PAUSE_MS = 25
CHUNK = 256
# USER is neuronx-cc's user-facing level: progress as well as errors, so it is shown with the warnings but
# coloured as an error only when the line carries an error code.
LEVEL_RANK = {"DEBUG": 0, None: 1, "INFO": 1, "WARNING": 2, "USER": 2, "ERROR": 3, "CRITICAL": 4, "FATAL": 4}
USER_RANK = 5  # a formatting key of its own: same filter rank as WARNING
FILTERS = (("All levels", 0), ("Info and above", 1), ("Warnings and errors", 2), ("Errors only", 3))


class LogView(QWidget):
    """Presents log lines; ``append_lines`` is cheap and may be called with any number of lines."""

    code_activated = Signal(str)
    open_log_requested = Signal(Path)  # the whole file, in the window (log_files_window.py): a remote box has no viewer

    def __init__(self, parent: QWidget | None = None, *, max_lines: int = MAX_LINES):
        super().__init__(parent)
        self.max_lines = max_lines
        self._raw: deque[str] = deque(maxlen=min(max_lines, MAX_BACKLOG))  # received, not yet parsed
        self._kept: deque[tuple[int, str]] = deque(maxlen=max_lines)  # parsed: (rank, line)
        self._to_show: deque[tuple[int, str]] = deque(maxlen=max_lines)  # parsed, passing the filter, not inserted
        self.received = 0
        self.shown = 0
        self.skipped = 0
        self._streaming = False
        self._min_rank = 0
        self._codes: dict[str, QListWidgetItem] = {}
        self._folder = TracebackFolder()
        self._log_path: Path | None = None
        self._formats = self._make_formats()
        self._build()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._on_timer_timeout)

    # ---- construction ----

    def _make_formats(self) -> dict[int, QTextCharFormat]:
        formats = {}
        for level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "USER"):
            fmt = QTextCharFormat()
            colour = theme.LEVEL_COLOURS.get(level)
            if colour:
                fmt.setForeground(QColor(colour))
            if level in ("ERROR", "CRITICAL"):
                fmt.setFontWeight(600)
            formats[USER_RANK if level == "USER" else LEVEL_RANK[level]] = fmt
        return formats

    def _build(self) -> None:
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setObjectName("logText")
        self.text.setMaximumBlockCount(self.max_lines)
        self.text.setUndoRedoEnabled(False)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText("The compiler's output appears here while a compile runs.")
        self.level_combo = QComboBox(toolTip="Show only lines at or above a level.")  # type: ignore[call-arg]  # a Qt property keyword
        for text, rank in FILTERS:
            self.level_combo.addItem(text, rank)
        self.search_edit = QLineEdit(placeholderText="Search the log (Enter: next, Shift+Enter: previous)")
        self.search_edit.setClearButtonEnabled(True)
        self.search_status = QLabel()
        self.wrap_check = QCheckBox("Wrap", toolTip="Wrap long lines instead of scrolling sideways.")
        self.codes_list = QListWidget()
        self.codes_list.setMinimumWidth(220)  # the code and the start of its message; the rest is in the tooltip
        self.codes_list.setToolTip("Error codes seen in this compile; click one to jump to its first line.")
        self.codes_label = QLabel("Error codes: none")
        self.footer = QLabel()
        self.footer.setWordWrap(True)  # with the path in its tooltip, so a long workdir never widens the window
        self.open_log_button = QPushButton("Whole log…", enabled=False)
        self.open_log_button.setToolTip(
            "The job's whole log, its events and the compiler's own logs, searchable, in a window of their own."
        )

        top = QHBoxLayout()
        top.addWidget(QLabel("Level"))
        top.addWidget(self.level_combo)
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.search_status)
        top.addWidget(self.wrap_check)
        # Shown once a code arrives: until then the log, which is what changes, has all the width.
        self.codes_pane = codes = QWidget(objectName="errorCodes")  # type: ignore[call-arg]  # a Qt property keyword
        codes.hide()
        codes_layout = QVBoxLayout(codes)
        codes_layout.setContentsMargins(0, 0, 0, 0)
        codes_layout.addWidget(self.codes_label)
        codes_layout.addWidget(self.codes_list)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.text)
        self.splitter.addWidget(codes)
        self.splitter.setStretchFactor(0, 4)
        self.splitter.setStretchFactor(1, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.footer, 1)
        bottom.addWidget(self.open_log_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)

        self.level_combo.currentIndexChanged.connect(self._on_level_combo_current_index_changed)
        self.search_edit.returnPressed.connect(self._on_search_edit_return_pressed)
        QShortcut(QKeySequence("Shift+Return"), self.search_edit, activated=self._on_search_previous_activated)
        QShortcut(QKeySequence.StandardKey.Find, self, activated=self.search_edit.setFocus)
        self.codes_list.itemActivated.connect(self._on_codes_list_item_activated)
        self.codes_list.itemClicked.connect(self._on_codes_list_item_activated)
        self.open_log_button.clicked.connect(self._on_open_log_button_clicked)
        self.wrap_check.toggled.connect(self._on_wrap_check_toggled)
        self._update_footer()

    # ---- feeding ----

    def clear(self, log_path: Path | None = None) -> None:
        """Empty the view for a new compile whose full log is at ``log_path``."""
        self._raw.clear()
        self._kept.clear()
        self._to_show.clear()
        self.received = self.shown = self.skipped = 0
        self._codes.clear()
        self.codes_list.clear()
        self._folder = TracebackFolder()
        self.codes_label.setText("Error codes: none")
        self.codes_pane.hide()
        self.text.clear()
        self.set_log_path(log_path)

    def set_log_path(self, log_path: Path | None) -> None:
        self._log_path = log_path
        self.open_log_button.setEnabled(log_path is not None)
        self._update_footer()

    def append_lines(self, lines: list[str], *, streaming: bool = True) -> None:
        """Queue lines; they appear within a tick or a few. The oldest beyond the cap are dropped unseen.
        ``streaming=False`` for lines read from a file: no other thread needs the GIL, so no pause between ticks."""
        self.received += len(lines)
        self._streaming = streaming
        assert self._raw.maxlen is not None  # made with one
        self.skipped += max(0, len(self._raw) + len(lines) - self._raw.maxlen)
        self._raw.extend(lines)  # the deque's maxlen drops the oldest, in C
        if not self._timer.isActive():
            self._timer.start(0)

    def add_error_code(self, code: str, message: str) -> None:
        """An error code found by the compile pipeline (it reads every line, also those the view dropped)."""
        if code in self._codes:
            return
        item = QListWidgetItem(f"{code}  {message}")
        item.setData(Qt.ItemDataRole.UserRole, code)
        item.setToolTip(f"{message}\n\n{describe(code)}")
        item.setForeground(QColor(theme.BAD))
        self._codes[code] = item
        self.codes_list.addItem(item)
        self.codes_label.setText(f"Error codes ({len(self._codes)}): click to jump")
        if self.codes_pane.isHidden():
            self.codes_pane.show()
            # A pane shown again in a splitter comes back at the width it had hidden, none: give it a fifth.
            total = sum(self.splitter.sizes())
            width = max(self.codes_pane.minimumSizeHint().width(), total // 5)
            self.splitter.setSizes([max(0, total - width), width])

    @property
    def pending(self) -> int:
        return len(self._raw) + len(self._to_show)

    # ---- the timer: parse and insert within a budget ----

    def _on_timer_timeout(self) -> None:
        deadline = time.perf_counter() + TICK_BUDGET_S
        bar = self.text.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 2
        while (self._raw or self._to_show) and time.perf_counter() < deadline:
            self._parse(CHUNK)
            self._insert(CHUNK)
        if at_bottom:
            bar.setValue(bar.maximum())
        self._update_footer()
        if self._raw or self._to_show:
            self._timer.start(STREAMING_PAUSE_MS if self._streaming else 0)
        self._streaming = False

    def _parse(self, n: int) -> None:
        raw, kept, show, min_rank = self._raw, self._kept, self._to_show, self._min_rank
        for _ in range(min(n, len(raw))):
            line = raw.popleft()
            fold = self._folder.feed(line)
            if fold is FOLDED:
                continue
            if isinstance(fold, str):  # a folded traceback's summary (FOLDED is left out above)
                kept.append((0, fold))
                show.append((0, fold))
            rec = parse_line(line)
            rank = LEVEL_RANK.get(rec.level, 1)
            if rec.codes and rank >= 1:
                rank = 3  # an error code outside DEBUG is an error, whatever the level says
            style = USER_RANK if rec.level == "USER" and rank == 2 else rank
            kept.append((style, line))
            if rank >= min_rank:
                show.append((style, line))
            for code in rec.codes:
                self.add_error_code(code, rec.message.strip())

    def _insert(self, n: int) -> None:
        show = self._to_show
        if not show:
            return
        cursor = QTextCursor(self.text.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        count = min(n, len(show))
        group: list[str] = []
        rank = show[0][0]
        first = self.text.document().isEmpty()
        for _ in range(count):
            r, line = show.popleft()
            if r != rank and group:
                self._write(cursor, group, rank, first)
                first, group = False, []
            rank = r
            group.append(line)
        if group:
            self._write(cursor, group, rank, first)
        cursor.endEditBlock()
        self.shown += count

    def _write(self, cursor: QTextCursor, lines: list[str], rank: int, first: bool) -> None:
        text = "\n".join(lines)
        cursor.insertText(text if first else "\n" + text, self._formats[rank])

    def _update_footer(self) -> None:
        parts = [plural(self.received, "line", grouped=True)]
        if self.received > self.max_lines:
            parts.append(f"the view keeps the last {self.max_lines:,}")
        if self.skipped:
            parts.append(f"{self.skipped:,} arrived faster than they could be shown")
        if self._log_path:
            parts.append(f"full log: {self._log_path.parent.name}/{self._log_path.name}")
        self.footer.setText(" · ".join(parts))
        self.footer.setToolTip(str(self._log_path) if self._log_path else "")

    # ---- filter, search, codes ----

    def _on_level_combo_current_index_changed(self, index: int) -> None:
        self._min_rank = int(self.level_combo.itemData(index))
        self.text.clear()
        self._to_show = deque(
            ((r, line) for r, line in self._kept if _rank(r) >= self._min_rank), maxlen=self.max_lines
        )
        self._timer.start(0)

    def _find(self, backward: bool) -> None:
        needle = self.search_edit.text()
        if not needle:
            self.search_status.clear()
            return
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if self.text.find(needle, flags):
            self.search_status.setText("")
            return
        # Wrap around once.
        cursor = self.text.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        self.text.setTextCursor(cursor)
        self.search_status.setText("" if self.text.find(needle, flags) else "not found")

    def _on_search_edit_return_pressed(self) -> None:
        self._find(backward=False)

    def _on_search_previous_activated(self) -> None:
        self._find(backward=True)

    def _on_codes_list_item_activated(self, item: QListWidgetItem) -> None:
        code = item.data(Qt.ItemDataRole.UserRole)
        cursor = self.text.document().find(code)
        if cursor.isNull():
            self.search_status.setText(
                f"{code} is no longer in the view (filtered, or older than it keeps): see job.log"
            )
        else:
            self.text.setTextCursor(cursor)
            self.text.centerCursor()
            self.search_status.setText("")
        self.code_activated.emit(code)

    def _on_open_log_button_clicked(self) -> None:
        if self._log_path is not None:
            self.open_log_requested.emit(self._log_path)

    def _on_wrap_check_toggled(self, on: bool) -> None:
        mode = QPlainTextEdit.LineWrapMode.WidgetWidth if on else QPlainTextEdit.LineWrapMode.NoWrap
        self.text.setLineWrapMode(mode)


def _rank(style: int) -> int:
    return LEVEL_RANK["USER"] if style == USER_RANK else style
