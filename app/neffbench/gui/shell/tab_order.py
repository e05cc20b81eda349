"""The keyboard's way through the window: Tab runs from the kernel chooser through the form to the toolbar's actions
(Compile, Cancel, Sweep, the spec files, Presets, the workdir), then the tabs; F6 jumps to the toolbar."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QToolBar, QWidget


def _takes_tab(widget: QWidget) -> bool:
    # A widget with a focus proxy (a spin box's line edit) is reached through the proxy.
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus) and widget.focusProxy() is None


def toolbar_widgets(window) -> list[QWidget]:
    """The toolbar's buttons and fields, left to right (none once the window has begun to close)."""
    bar = window.findChild(QToolBar, "mainToolbar")
    if bar is None:
        return []
    found = [bar.widgetForAction(action) for action in bar.actions() if not action.isSeparator()]
    return [w for w in found if w is not None and _takes_tab(w)]


def form_widgets(window) -> list[QWidget]:
    """The current kernel form's fields in their own Tab order (the form's business), wherever the window's chain
    has them: a form built later (another kernel's, new fields after a Resolve) joins the chain at its end."""
    page, start = window.form.current(), window.form.kernel_combo
    out, widget = [], start.nextInFocusChain()
    while widget is not start:
        if page.isAncestorOf(widget) and _takes_tab(widget):
            out.append(widget)
        widget = widget.nextInFocusChain()
    return out


def chain(window) -> list[QWidget]:
    return [window.form.kernel_combo, *form_widgets(window), *toolbar_widgets(window), window.tabs.tabBar()]


def arrange(window) -> None:
    """Tab from the kernel chooser through the form to the toolbar, then the tabs (their pages follow on)."""
    order = chain(window)
    for first, second in zip(order, order[1:], strict=False):
        QWidget.setTabOrder(first, second)


def focus_toolbar(window) -> None:
    """The first toolbar widget that can take the keyboard (Compile, unless it is greyed out)."""
    for widget in toolbar_widgets(window):
        if widget.isEnabled() and widget.isVisible():
            widget.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return


class TabOrder(QObject):
    """Arranges the window's Tab order once the event loop is back after any number of ``request()``s (the form
    changes kernel, or a Resolve gives it new fields)."""

    def __init__(self, window):
        super().__init__(window)
        self._window = window
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._on_timer_timeout)

    def request(self, *_args) -> None:
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        arrange(self._window)
