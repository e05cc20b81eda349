"""The form column: a kernel chooser above the form of the chosen kernel (generated, or the kernel's own).

Presents the same interface as one form (``spec``, ``set_spec``, ``errors``, ``editor``,
``spec_changed``, ``problems_changed``), so the window never needs to know which kernel it edits.
Each kernel's form is built the first time it is shown and keeps its values while another is.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from neffbench.gui.forms.contribution import KernelForm, spec_form
from neffbench.gui.forms.memory_note import MemoryNote
from neffbench.gui.widgets import wheel
from neffbench.gui.widgets.flow import CurrentPageStack
from neffbench.kernels import registry


class KernelForms(QWidget):
    spec_changed = Signal(object)
    problems_changed = Signal(list)
    kernel_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._kernels = {k.name: k for k in registry.available()}
        self._forms: dict[str, KernelForm] = {}
        # Each form's spec as last loaded or saved: what differs from it is an unsaved edit (None: edited before this
        # session, as a restart restores it).
        self._baseline: dict[str, Any] = {}
        # Specs (and form states) the last session left for kernels whose forms are not built yet: applied when one
        # is first shown, and kept as they are until then.
        self._pending: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._unsaved: set[str] = set()
        self.kernel_combo = QComboBox()
        self.kernel_combo.setObjectName("kernel")
        wheel.guard(self.kernel_combo)
        for kernel in self._kernels.values():
            self.kernel_combo.addItem(kernel.title, kernel.name)
            self.kernel_combo.setItemData(self.kernel_combo.count() - 1, kernel.summary, role=3)  # Qt.ToolTipRole
        self.kernel_combo.setToolTip(
            "What to compile: a built-in kernel, any PyTorch module or function, or a "
            "plugin's kernel (neffbench kernel list)."
        )
        self.stack = CurrentPageStack()  # each kernel's form its own width
        self.memory = MemoryNote()
        head = QFormLayout()
        head.setContentsMargins(6, 6, 6, 0)
        label = QLabel("Kernel")
        label.setBuddy(self.kernel_combo)
        head.addRow(label, self.kernel_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.memory)
        layout.addWidget(self.stack, 1)
        self.kernel_combo.activated.connect(self._on_kernel_combo_activated)

    # ---- the current form's interface ----

    @property
    def kernel(self) -> str:
        return self.kernel_combo.currentData()

    def current(self) -> KernelForm:
        return self._form(self.kernel)

    def spec(self) -> Any:
        return self.current().spec()

    def set_spec(self, spec: Any, *, held: list | None = None) -> None:
        """Show ``spec`` in its kernel's form, switching to that kernel. ``held``: a spec file's problems that
        ``spec`` could not hold (``SpecForm.set_spec``); SpecError with them for a form that cannot show them."""
        name = getattr(spec, "kernel", registry.DEFAULT)
        if held and not self._form(name).holds_problems:
            from neffbench.spec import SpecError

            raise SpecError(held)
        self._pending.pop(name, None)
        self._switch(name)
        if held:
            self._forms[name].set_spec(spec, held=held)  # type: ignore[call-arg]  # holds_problems says it takes them
        else:
            self._forms[name].set_spec(spec)
        self._baseline[name] = self._forms[name].spec()

    def edit(self, spec: Any) -> None:
        """Show ``spec`` in its kernel's form as an edit of what was there (a one-click fix), not as a spec loaded:
        it is unsaved until saved."""
        name = getattr(spec, "kernel", registry.DEFAULT)
        loaded = self._baseline.get(name)
        self.set_spec(spec)
        self._baseline[name] = loaded

    def has_unsaved_edits(self, name: str) -> bool:
        """Whether the form of kernel ``name`` holds edits since its spec was last loaded or saved (also while it waits,
        not shown yet, with the edits a restart brought back)."""
        if name in self._pending:
            return name in self._unsaved
        return name in self._forms and self._forms[name].spec() != self._baseline.get(name)

    def mark_saved(self) -> None:
        """The current form's spec is saved: nothing in it is an unsaved edit now."""
        self._baseline[self.kernel] = self.spec()

    def kernel_title(self, name: str) -> str:
        return self._kernels[name].title

    # ---- across sessions ----

    def restore(self, specs: dict[str, Any], current: str, *, unsaved: set[str], states: dict[str, dict]) -> None:
        """Each kernel's spec as the last session left it, with what its form knew besides (``kept_state``: the
        module form's Resolve) and whether it held unsaved edits; ``current`` is shown, the others are applied when
        their form is first shown."""
        self._unsaved = set(unsaved)
        self._pending = {n: (spec, states.get(n) or {}) for n, spec in specs.items() if n in self._kernels}
        self._switch(current)

    def specs(self) -> dict[str, Any]:
        """Every kernel's spec this session has (the forms shown, and those restored but not shown yet)."""
        return {**{n: spec for n, (spec, _) in self._pending.items()}, **{n: f.spec() for n, f in self._forms.items()}}

    def states(self) -> dict[str, dict]:
        """What each form knows beyond its spec, for the next session (``kept_state``; most forms know nothing)."""
        out = {n: state for n, (_, state) in self._pending.items() if state}
        for name, form in self._forms.items():
            state = form.kept_state()
            if state:
                out[name] = state
        return out

    def unsaved_kernels(self) -> set[str]:
        return {n for n in self._pending if n in self._unsaved} | {n for n in self._forms if self.has_unsaved_edits(n)}

    def errors(self) -> list:
        return self.current().errors()

    def problems(self) -> list:
        return self.current().problems()

    def editor(self, key: str) -> Any:
        return self.current().editor(key)

    def problem_label(self, key: str) -> Any:
        return self.current().problem_label(key)

    def field_label(self, key: str) -> Any:
        return self.current().field_label(key)

    # ---- internals ----

    def _form(self, name: str) -> KernelForm:
        if name not in self._forms:
            form = spec_form(self._kernels[name])
            assert isinstance(form, QWidget)  # every kernel's form is a widget
            form.spec_changed.connect(lambda spec, name=name: self._on_form_spec_changed(name, spec))
            form.problems_changed.connect(lambda problems, name=name: self._on_form_problems_changed(name, problems))
            self._forms[name] = form
            self.stack.addWidget(form)
            if name in self._pending:
                spec, state = self._pending.pop(name)
                form.set_spec(spec)
                if state:
                    form.restore_state(state)
            self._baseline[name] = None if name in self._unsaved else form.spec()
        return self._forms[name]

    def _switch(self, name: str) -> None:
        if name not in self._kernels:
            raise KeyError(f"No kernel named '{name}' is loaded.")
        index = self.kernel_combo.findData(name)
        changed = index != self.kernel_combo.currentIndex() or self.stack.currentWidget() is not self._forms.get(name)
        self.kernel_combo.setCurrentIndex(index)
        form = self._form(name)
        assert isinstance(form, QWidget)
        self.stack.setCurrentWidget(form)
        if changed:
            self.kernel_changed.emit(name)

    def _on_kernel_combo_activated(self, index: int) -> None:
        name = self.kernel_combo.itemData(index)
        fresh = name not in self._forms and name not in self._pending
        self._switch(name)
        form = self._forms[name]
        if fresh:
            form.set_spec(self._kernels[name].default_spec())
            self._baseline[name] = form.spec()
        else:
            self.spec_changed.emit(form.spec())
            self._on_form_problems_changed(name, form.problems())

    def _on_form_spec_changed(self, name: str, spec: Any) -> None:
        if name == self.kernel:
            self.spec_changed.emit(spec)

    def _on_form_problems_changed(self, name: str, problems: list) -> None:
        if name == self.kernel:
            # Compiles use the backend auto resolves to; the verdict is judged for the same one.
            self.memory.judge(self.spec(), "auto", valid=not any(p.severity == "error" for p in problems))
            self.problems_changed.emit(problems)
