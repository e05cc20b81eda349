"""The ✖/⚠ line under a form field: wrapped inside the form whatever the message quotes."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from neffbench.gui.widgets import theme
from neffbench.spec import Problem

_ZWSP = "\u200b"
# A run this long with no space (a path, a quoted value) could not wrap, and a word-wrapped label's
# minimum width is its longest word: the form, which never scrolls sideways, would clip the line.
_LONG_RUN = 24
_LONG_RUN_RE = re.compile(rf"\S{{{_LONG_RUN + 1},}}")


def breakable(text: str) -> str:
    """``text`` with invisible break opportunities in long runs: after each ``/``, else every 24 characters."""

    def split(match: re.Match) -> str:
        parts = re.split(r"(?<=/)", match.group(0))
        out: list[str] = []
        for part in parts:
            out.extend(part[i : i + _LONG_RUN] for i in range(0, len(part), _LONG_RUN))
        return _ZWSP.join(p for p in out if p)

    return _LONG_RUN_RE.sub(split, text)


def problem_label(key: str) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setObjectName(f"problem:{key}")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.hide()
    return label


def show_problems(label: QLabel, problems: list[Problem], *, hold: bool = False) -> None:
    """The ✖/⚠ lines of ``problems`` in the worst one's colour (hidden when there are none).

    ``hold``: the user is typing in the rows above the label (a table whose problems it lists), so it does not
    shrink, and what is below it does not move under the pointer; shown again without ``hold``, it fits its lines.
    """
    held = label.height() if hold and label.isVisible() else 0
    label.setMinimumHeight(held)
    if not problems:
        label.clear()
        label.setVisible(bool(held))
        return
    worst = "error" if any(p.severity == "error" for p in problems) else "warning"
    label.setText("\n".join(f"{'✖' if p.severity == 'error' else '⚠'} {breakable(p.message)}" for p in problems))
    label.setStyleSheet(f"color: {theme.PROBLEM_COLOURS[worst]};")
    label.setProperty("severity", worst)
    label.show()
