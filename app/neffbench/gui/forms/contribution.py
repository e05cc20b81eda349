"""What the window asks of a kernel's spec form (``Kernel.gui_form``), declared once, and the form made for a
kernel: its own, checked against the declaration when first imported, else the one generated from its fields."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import SignalInstance

from neffbench.gui.widgets.kernel_widget import resolved
from neffbench.kernels.api import Kernel
from neffbench.spec import Problem


class KernelForm(Protocol):
    """A kernel's spec form: made with no arguments, it edits one spec of the kernel's and says what changed."""

    spec_changed: SignalInstance  # (spec) after every edit, or set_spec
    problems_changed: SignalInstance  # (list[Problem]) validation's, plus fields whose text is no value yet
    # Whether ``set_spec`` takes ``held``: the problems of a spec file's values the spec could not hold.
    holds_problems: bool
    # The width the form column is given when the form is first shown.
    preferred_width: int

    def spec(self) -> Any: ...

    def set_spec(self, spec: Any) -> None: ...

    def problems(self) -> list[Problem]: ...

    def errors(self) -> list[Problem]: ...

    def editor(self, key: str) -> Any:
        """The editor of a field by its key (``name``, ``compiler.target``)."""

    def problem_label(self, key: str) -> Any: ...

    def field_label(self, key: str) -> Any: ...

    def kept_state(self) -> dict[str, Any]:
        """What the form knows beyond its spec, for the next session (JSON); most forms know nothing."""

    def restore_state(self, state: dict[str, Any]) -> None: ...


def spec_form(kernel: Kernel) -> KernelForm:
    """A new spec form for ``kernel``: its own (``gui_form``), else the one generated from its spec's fields."""
    if kernel.gui_form:
        return resolved(kernel, kernel.gui_form, KernelForm)()  # type: ignore[return-value]
    from neffbench.gui.forms.spec_form import SpecForm

    return SpecForm(spec_class=kernel.spec_class, titles=kernel.section_titles)  # type: ignore[return-value]
