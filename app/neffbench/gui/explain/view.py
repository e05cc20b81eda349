"""The explanation of a job (``neffbench.jobs.explained``: its outcome and cause, then its log's) or of any
compiler log, as ``neffbench explain`` gives it: outcome, cause, codes, passes.

Reading happens in a worker thread (a debug-verbosity log has millions of lines); the view only
presents. A code in the text is a link: clicking it shows the code's help below, with its docs page.
Any log file dropped on the view is explained. The view always says whose explanation it shows, and
once another compile or sweep has started, that it is not one of that run's.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from neffbench.gui.widgets import theme
from neffbench.words import plural

if TYPE_CHECKING:
    from neffbench.gui.widgets.background import Task

OUTCOME_COLOURS = {"failed": theme.BAD, "passed": theme.GOOD, "unknown": theme.WARN}
NOTHING_YET = (
    "Nothing explained yet: a finished job's log is explained here, or drop any compiler log "
    "(log-neuron-cc.txt, a saved stdout, a job.log) on this pane."
)
MAX_PASS_ROWS = 40
CONTEXT_CHARS = 160


def code_link(code: str) -> str:
    return f'<a href="code:{html.escape(code)}">{html.escape(code)}</a>'


MORE_ERRORS = "errors:more"  # the link that opens (and closes) the errors after the first


def explanation_html(data: dict, *, all_errors: bool = False) -> str:
    """The body of the view for ``Explanation.to_json()`` or ``JobExplanation.to_json()``; ``all_errors``: the
    errors after the first listed, each with its line and message (else one link that opens them)."""
    from neffbench.compilerlog.codes import lookup

    out = [_facts_html(data)]
    first = data.get("first_error")
    if first:
        level = f", {html.escape(first['level'])}" if first.get("level") else ""
        message = html.escape(first["message"]).replace("\n", "<br>")
        code = first.get("code")
        if code:
            # The code inside the message becomes the link; a message without it gets the link in front.
            shown = html.escape(code)
            message = (
                message.replace(shown, code_link(code), 1) if shown in message else f"{code_link(code)}: {message}"
            )
        out.append(f"<h3>First error <small>(line {first['line']}{level})</small></h3><p>{message}</p>")
        if code:
            help_ = lookup(code)
            out.append(
                f"<p><b>{html.escape(help_.title)}</b><br>{html.escape(help_.advice)}<br>"
                f'<a href="{html.escape(help_.url)}">{html.escape(help_.url)}</a></p>'
            )
        context = data.get("context", [])
        width = len(str(context[-1]["line"])) if context else 1
        rows = []
        for c in context:
            text = html.escape(f"{c['line']:>{width}} | {c['text'][:CONTEXT_CHARS]}")
            rows.append(
                f"<span style='color:{theme.BAD};font-weight:bold'>{text}</span>"
                if c["line"] == first["line"]
                else f"<span style='color:#666'>{text}</span>"
            )
        out.append("<pre>" + "<br>".join(rows) + "</pre>")
    cause = data.get("cause_above_internal_error")
    if cause:
        out.append(
            f"<h3 style='color:{theme.BAD}'>Likely root cause <small>(line {cause['line']}, just above the internal "
            f"compiler error)</small></h3><p>{html.escape(str(cause['text']))}</p>"
        )
    if first:
        out.append(_more_errors_html(data, first, all_errors))
    codes = data.get("codes") or []
    if codes:
        out.append("<p><b>Codes:</b> " + ", ".join(code_link(c) for c in codes) + "</p>")
    if data.get("exit_code") is not None:
        out.append(f"<p><b>Exit status</b> {data['exit_code']}: {html.escape(data.get('exit_meaning') or '')}</p>")
    out.append(_passes_html(data))
    if data.get("runs_compiler", True):  # a cpu-check job's facts say it runs none: nothing to look for here
        notes = "".join(
            f"<br><span style='color:{theme.WARN}'>{html.escape(n[0].upper() + n[1:])}.</span>"
            for n in data.get("command_notes") or []
        )
        out.append(
            f"<p><b>Compiler version:</b> {_said(data, 'compiler_version')}"
            f"<br><b>Command:</b> <code>{_said(data, 'command')}</code>{notes}</p>"
        )
    if len(data.get("compiles", [])) > 1:
        items = "".join(
            f"<li>from line {c['first_line']}: status {c['status'] or '-'}, exit "
            f"{'-' if c['exit_code'] is None else c['exit_code']}, {plural(c['errors'], 'error')}</li>"
            for c in data["compiles"]
        )
        out.append(f"<p><b>{len(data['compiles'])} compiles in this output</b></p><ol>{items}</ol>")
    return "".join(out)


def _more_errors_html(data: dict, first: dict, shown: bool) -> str:
    """The errors after the first: a link that opens them (``▸ 3 more errors in this output``), or, opened, each
    with its line, level and message."""
    others = [e for e in data.get("errors", []) if e != first]
    if not others:
        return ""
    arrow = "▾" if shown else "▸"
    count = plural(len(others), "more error", "more errors")
    link = f"<p><a href='{MORE_ERRORS}'>{arrow} {count} in this output</a></p>"
    if not shown:
        return link
    items = "".join(
        f"<li>line {e['line']}{', ' + html.escape(e['level']) if e.get('level') else ''}: "
        f"{html.escape(str(e['message'])).replace(chr(10), '<br>')}</li>"
        for e in others
    )
    return f"{link}<ul>{items}</ul>"


def _said(data: dict, key: str) -> str:
    """A value of the explanation, and whence: the output, or the job's record when the output does not say it."""
    value = data.get(key)
    if not value:
        return "(not in this output)"
    whence = " <small>(from the job's record: this output does not say)</small>" if data.get(f"{key}_from") else ""
    return html.escape(str(value)) + whence


def _facts_html(data: dict) -> str:
    """A job's record first (outcome, cause, backend, NEFF), and its first error when the log does not show it."""
    rows = "".join(
        f"<tr><td><b>{html.escape(label)}</b>&nbsp;</td><td>{html.escape(text)}</td></tr>"
        for label, text in data.get("facts") or []
    )
    out = [f"<table cellspacing='2' cellpadding='0'>{rows}</table>"] if rows else []
    if data.get("no_log"):
        out.append("<p>This job has no log to explain: what is above is all its record says.</p>")
    error = data.get("record_error")
    if error and error.get("message"):
        lines = [*(error.get("before") or []), str(error.get("line") or ""), *(error.get("after") or [])]
        shown = "<br>".join(html.escape(str(line)[:CONTEXT_CHARS]) for line in lines if str(line).strip())
        code = f"{code_link(error['code'])}: " if error.get("code") else ""
        out.append(
            f"<h3>First error <small>(from job.json)</small></h3><p>{code}{html.escape(str(error['message']))}</p>"
            + (f"<pre>{shown}</pre>" if shown else "")
        )
    return "".join(out)


def _passes_html(data: dict) -> str:
    runs = [p for p in data.get("passes", []) if p.get("seconds") is not None]
    if not runs:
        return ""
    longest = max(p["seconds"] for p in runs) or 1.0
    shown = runs if len(runs) <= MAX_PASS_ROWS else sorted(runs, key=lambda p: -p["seconds"])[:MAX_PASS_ROWS]
    if shown is not runs:
        keep = {id(p) for p in shown}
        shown = [p for p in runs if id(p) in keep]
    # A pass's name is never broken ("Walru / sDriv / er" in a narrow pane): the names and times take the width
    # they need, the bars the rest, each its share of the longest pass.
    rows = "".join(
        f"<tr><td style='white-space:nowrap'>{html.escape(p['name'])}</td>"
        f"<td align='right' style='white-space:nowrap'>{p['seconds']:.3f} s</td><td width='100%'>"
        f"<table cellspacing='0' cellpadding='0' width='100%'><tr>{_bar_cells(p['seconds'] / longest)}</tr></table>"
        "</td></tr>"
        for p in shown
    )
    note = f" (the {MAX_PASS_ROWS} longest, in order)" if len(shown) < len(runs) else ""
    unfinished = data.get("unfinished_passes") or []
    tail = (
        f"<p>Never finished (the compile stopped in it): {html.escape(', '.join(unfinished))}</p>" if unfinished else ""
    )
    return (
        f"<p><b>Passes:</b> {plural(len(runs), 'run')}, {sum(p['seconds'] for p in runs):.2f} s{note}</p>"
        f"<table cellspacing='2' cellpadding='0' width='100%'>{rows}</table>{tail}"
    )


def _bar_cells(share: float) -> str:
    """A bar ``share`` of its cell's width long: a coloured cell and, beside it, an empty one holding the rest."""
    filled = max(1, round(100 * share))
    rest = f"<td width='{100 - filled}%'></td>" if filled < 100 else ""
    return f"<td bgcolor='{theme.ROTATED}' width='{filled}%' height='9'></td>{rest}"


def _explained(path: Path, job_dir: Path | None) -> dict:
    """On a worker thread: a job's explanation, or a loose log's."""
    from neffbench.compilerlog.explain import explain
    from neffbench.jobs.explained import explain_job

    return explain_job(job_dir).to_json() if job_dir is not None else explain(path).to_json()


class ExplanationView(QWidget):
    """Shows one explanation; ``explain_path`` reads a log (or a job directory) in the background."""

    explained = Signal(dict)
    bug_report_requested = Signal(str)  # a job directory

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.data: dict | None = None
        self.all_errors = False  # the errors after the first, opened
        self.job_dir: Path | None = None
        self._worker: Task | None = None
        self._request = 0  # only the newest request's answer is shown
        self.owner: str | None = None  # whose explanation is shown: "job X" or "the file X"
        self.stale_for: str | None = None  # the run started since, which this explanation is not of
        self.headline = QLabel(NOTHING_YET)
        self.headline.setObjectName("explainHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body = QTextBrowser()
        self.body.setOpenLinks(False)
        self.body.anchorClicked.connect(self._on_body_anchor_clicked)
        self.code_help = QLabel()
        self.code_help.setObjectName("codeHelp")
        self.code_help.setWordWrap(True)
        self.code_help.setOpenExternalLinks(True)
        self.code_help.setVisible(False)
        self.belongs = QLabel()
        self.belongs.setObjectName("explainBelongs")
        self.belongs.setWordWrap(True)
        self.belongs.setStyleSheet(f"color: {theme.WARN};")
        self.belongs.setVisible(False)
        self.open_button = QPushButton("Explain a log…", toolTip="Choose a compiler log file to explain.")
        self.report_button = QPushButton(
            "Save bug report…", enabled=False, toolTip="Zip what a compiler team needs to reproduce this job's failure."
        )
        self.open_button.clicked.connect(self._on_open_button_clicked)
        self.report_button.clicked.connect(self._on_report_button_clicked)
        # The headline has a row of its own: beside the buttons a narrow pane wrapped it into a tall column.
        bar = QHBoxLayout()
        bar.addStretch(1)
        bar.addWidget(self.open_button)
        bar.addWidget(self.report_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.headline)
        layout.addLayout(bar)
        layout.addWidget(self.belongs)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.code_help)

    # ---- reading ----

    def explain_path(self, path: str | Path) -> None:
        """A job directory (or its job.log) is explained as a job; any other file as a compiler log."""
        from neffbench.gui.widgets import background
        from neffbench.jobs.explained import job_dir_of

        path = Path(path)
        self.job_dir = job_dir = job_dir_of(path)
        self.report_button.setEnabled(job_dir is not None)
        self.owner = f"job {job_dir.name}" if job_dir is not None else f"the file {path}"
        self.stale_for = None
        self.data = None
        self.headline.setText(html.escape(f"Reading {path}…"))
        self.body.clear()
        self._show_belongs()
        self._request += 1
        # Partials of methods, not closures: dropped if this view goes before the answer comes.
        self._worker = background.start(
            functools.partial(_explained, path, job_dir),
            returned=functools.partial(self._on_worker_returned, self._request),
            errored=functools.partial(self._on_explain_errored, self._request),
        )

    def _on_worker_returned(self, request: int, data: dict) -> None:
        if request == self._request:  # a later request is on its way: an earlier answer must not overwrite it
            self.show_data(data)

    def _on_explain_errored(self, request: int, exc: Exception) -> None:
        if request == self._request:
            self._on_worker_errored(exc)

    def clear(self) -> None:
        self._request += 1
        self.data, self.job_dir, self.owner, self.stale_for = None, None, None, None
        self.report_button.setEnabled(False)
        self.headline.setText(NOTHING_YET)
        self.body.clear()
        self.code_help.setVisible(False)
        self._show_belongs()

    def mark_stale(self, run: str) -> None:
        """``run`` (``the compile running now``) started after what is shown: say it belongs to another job."""
        if self.owner is not None:
            self.stale_for = run
            self._show_belongs()

    def _show_belongs(self) -> None:
        if self.stale_for is not None:
            self.belongs.setText(f"This explains {self.owner}, not {self.stale_for}.")
        self.belongs.setVisible(self.stale_for is not None)

    def show_data(self, data: dict) -> None:
        self.data = data
        self.all_errors = False
        outcome = data.get("outcome", "unknown")
        whose = f"Job {data['job_id']} · " if data.get("job_id") else ""
        self.headline.setText(
            f"<b style='color:{OUTCOME_COLOURS[outcome]}'>{html.escape(data['headline'])}</b>"
            f"<br><small>{html.escape(whose + data.get('source', ''))}: {plural(data.get('lines', 0), 'line', grouped=True)}"
            "</small>"
        )
        self.body.setHtml(explanation_html(data))
        self.code_help.setVisible(False)
        self.explained.emit(data)

    def show_all_errors(self, shown: bool) -> None:
        """Open (or close) the errors after the first, keeping the place the reader scrolled to."""
        if self.data is None:
            return
        self.all_errors = shown
        bar = self.body.verticalScrollBar()
        at = bar.value()
        self.body.setHtml(explanation_html(self.data, all_errors=shown))
        bar.setValue(at)

    def show_code(self, code: str) -> None:
        from neffbench.compilerlog.codes import lookup

        found = lookup(code)
        state = "" if found.known else " (not in the table shipped with neffbench)"
        self.code_help.setText(
            f"<b>{html.escape(found.code)}</b>{state}: {html.escape(found.title)}<br>"
            f"{html.escape(found.advice)}<br><a href='{html.escape(found.url)}'>"
            f"{html.escape(found.url)}</a>"
        )
        self.code_help.setVisible(True)

    def _on_worker_errored(self, exc: Exception) -> None:
        self.headline.setText(f"<b style='color:{theme.BAD}'>Cannot explain: {html.escape(str(exc))}</b>")

    def _on_body_anchor_clicked(self, url: QUrl) -> None:
        if url.toString() == MORE_ERRORS:
            self.show_all_errors(not self.all_errors)
        elif url.scheme() == "code":
            self.show_code(url.path())
        else:
            QDesktopServices.openUrl(url)

    def _on_open_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Explain a compiler log", "", "Logs (*.txt *.log);;All files (*)")
        if path:
            self.explain_path(path)

    def _on_report_button_clicked(self) -> None:
        if self.job_dir is not None:
            self.bug_report_requested.emit(str(self.job_dir))
