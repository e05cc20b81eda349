"""Menu mnemonics (the underlined letter Alt and the menu's own keys use): each item of a menu its own letter."""

from __future__ import annotations

from PySide6.QtWidgets import QMenu


def mnemonic(text: str) -> str | None:
    """The letter ``text`` marks with a lone ``&`` (lower case), or None; ``&&`` is a literal ampersand."""
    at = 0
    while at < len(text) - 1:
        if text[at] == "&":
            if text[at + 1] != "&":
                return text[at + 1].lower()
            at += 1
        at += 1
    return None


def marked(text: str, taken: set[str]) -> str:
    """``text`` with a mnemonic none of ``taken`` has: a word's first letter if one is free, else any letter or
    digit; ``text`` itself when it has one already or every letter is taken."""
    if mnemonic(text) is not None:
        return text
    letters = [at for at, c in enumerate(text) if c.isascii() and c.isalnum() and (at == 0 or text[at - 1] != "&")]
    starts = [at for at in letters if at == 0 or not text[at - 1].isalnum()]
    for at in starts + letters:
        if text[at].lower() not in taken:
            return f"{text[:at]}&{text[at:]}"
    return text


def assign(menu: QMenu) -> None:
    """Give each item of ``menu`` (and of its submenus) without a mnemonic one no other item of its menu has."""
    actions = [a for a in menu.actions() if not a.isSeparator()]
    taken = {m for a in actions if (m := mnemonic(a.text())) is not None}
    for action in actions:
        text = marked(action.text(), taken)
        submenu = action.menu()
        if text != action.text():
            if isinstance(submenu, QMenu):
                submenu.setTitle(text)
            else:
                action.setText(text)
            taken.add(mnemonic(text) or "")
        if isinstance(submenu, QMenu):
            assign(submenu)
