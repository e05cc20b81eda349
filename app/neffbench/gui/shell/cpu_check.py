"""The Preview tab's CPU check, asked for from the window: it needs a valid form; "Keep as state" on its finding
edits the form (unsaved, as any edit) and checks again."""

from __future__ import annotations

from neffbench.kernels import registry
from neffbench.words import plural


def run(window) -> None:
    if window.form.errors():
        window.preview_stack.show_invalid("Fix the form's errors first: the CPU check needs a valid spec.")
        return
    window.preview_stack.show_check_running()
    window.preview_controller.request_check(window.current_spec())


def keep_state(window, names: list) -> None:
    kept = registry.for_spec(window.form.spec()).with_state(window.form.spec(), list(names))
    if kept is None:
        window.statusBar().showMessage("This kernel cannot keep state: its forward must return what it writes.", 8000)
        return
    window.form.edit(kept)
    window.statusBar().showMessage(
        f"Kept {plural(len(names), 'tensor')} as the module's state (State, under the module's advanced fields); "
        "the CPU check runs again.",
        8000,
    )
    run(window)
