"""The spec form, generated from the spec dataclasses: one row per field, problems shown under each."""

from __future__ import annotations

import dataclasses
import functools

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QScrollArea, QToolButton, QVBoxLayout, QWidget

from neffbench.gui.forms.field_editors import FieldEditor, editor_for
from neffbench.gui.forms.field_words import SECTION_TITLES, labels, problem_text, worded
from neffbench.gui.forms.problem_lines import problem_label, show_problems
from neffbench.gui.widgets import theme
from neffbench.spec import Problem, fields_of, hints_of, is_active, sections_of, top_fields_of, validate
from neffbench.spec.ignored import ignored_fields


class _Row:
    """A field's label, editor and problem line, and the layout that holds them."""

    def __init__(self, key: str, editor: FieldEditor, layout: QFormLayout):
        self.key = key
        self.editor = editor
        self.layout = layout
        meta = editor.field.metadata
        self.label = QLabel(meta["label"])
        self.label.setToolTip(meta["help"])
        self.label.setBuddy(editor.widget)
        self.problem = problem_label(key)
        holder = QWidget()
        box = QVBoxLayout(holder)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(1)
        box.addWidget(editor.widget)
        box.addWidget(self.problem)
        layout.addRow(self.label, holder)
        self.holder = holder

    def show_problems(self, problems: list[Problem]) -> None:
        show_problems(self.problem, problems)

    def set_visible(self, visible: bool) -> None:
        self.layout.setRowVisible(self.holder, visible)

    def show_ignored(self, reason: str | None, *, editable: bool) -> None:
        self.editor.show_ignored(reason, self.label, editable=editable)


class SpecForm(QScrollArea):
    """Edits a spec of one kernel (any frozen dataclass spec: its top fields and dataclass sections).

    ``spec_changed`` carries the new spec after every edit (or ``set_spec``); ``problems_changed``
    carries validation's problems plus fields whose text is not a value yet.
    """

    spec_changed = Signal(object)
    problems_changed = Signal(list)
    # ``set_spec`` takes the problems of a spec file's values the spec could not hold (``held``).
    holds_problems = True
    # The width of a first launch's form column.
    preferred_width = 380

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        exclude: tuple[str, ...] = ("workdir",),
        spec_class: type | None = None,
        titles: dict[str, str] | None = None,
    ):
        super().__init__(parent)
        if spec_class is None:
            from neffbench.kernels import registry

            default = registry.get(registry.DEFAULT)
            spec_class, titles = default.spec_class, default.section_titles
        self._titles = {**SECTION_TITLES, **(titles or {})}
        self._spec = spec_class()
        self._exclude = exclude
        self._rows: dict[str, _Row] = {}
        self._problems: list[Problem] = []
        self._held: list[Problem] = []
        # Each section's Advanced disclosure and the fields under it: opened when one of them has a problem.
        self._advanced: list[tuple[QToolButton, set[str]]] = []
        self._updating = False
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        self._body = QVBoxLayout(body)
        self._body.setContentsMargins(6, 6, 6, 6)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.hide()
        self._body.addWidget(self.banner)
        self._build_section("", top_fields_of(spec_class), hints_of(spec_class))
        for section, cls in sections_of(spec_class).items():
            self._build_section(section, fields_of(spec_class, section), hints_of(cls))
        self._body.addStretch(1)
        self.setWidget(body)
        self.set_spec(self._spec)

    def _build_section(self, section: str, fields: tuple[dataclasses.Field, ...], hints: dict) -> None:
        group = QGroupBox(self._titles.get(section, section.replace("_", " ").capitalize()))
        group_layout = QVBoxLayout(group)
        group_layout.setContentsMargins(8, 4, 8, 6)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        group_layout.addLayout(form)
        advanced = [f for f in fields if f.metadata["advanced"] and f.name not in self._exclude]
        advanced_form = None
        if advanced:
            toggle = _disclosure("Advanced")
            inner = QWidget()
            inner.hide()
            toggle.toggled.connect(inner.setVisible)
            advanced_form = QFormLayout(inner)
            advanced_form.setContentsMargins(0, 0, 0, 0)
            advanced_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for f in fields:
            if f.name in self._exclude:
                continue
            key = f"{section}.{f.name}" if section else f.name
            editor = editor_for(f, hints[f.name])
            editor.widget.setObjectName(key)
            self._rows[key] = _Row(key, editor, advanced_form if advanced_form is not None and f in advanced else form)
            editor.edited.connect(functools.partial(self._on_editor_edited, key))
        if advanced:
            group_layout.addWidget(toggle)
            group_layout.addWidget(inner)
            self._advanced.append((toggle, {f"{section}.{f.name}" if section else f.name for f in advanced}))
        self._body.addWidget(group)

    # ---- public ----

    def spec(self):
        return self._spec

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def errors(self) -> list[Problem]:
        return [p for p in self._problems if p.severity == "error"]

    def editor(self, key: str) -> FieldEditor:
        """The editor of a field, by its ``section.name`` key (for tests and focus)."""
        return self._rows[key].editor

    def problem_label(self, key: str) -> QLabel:
        return self._rows[key].problem

    def field_label(self, key: str) -> QLabel:
        """The label beside a field's editor (its tooltip says why a disabled field is ignored)."""
        return self._rows[key].label

    def kept_state(self) -> dict:
        """Nothing beyond the spec: every value the form shows is in it."""
        return {}

    def restore_state(self, state: dict) -> None:
        """Nothing to restore (see ``kept_state``)."""

    def set_spec(self, spec, *, held: list[Problem] | tuple[Problem, ...] = ()) -> None:
        """Show ``spec`` in the widgets (edits that follow build on it). ``held``: the problems of values a spec file
        held that ``spec`` could not (a wrong type, an unknown key), shown as errors under their field until that
        field is edited (those of no field until any is)."""
        self._held = [self._explained(p) for p in held]
        self._updating = True
        try:
            for key, row in self._rows.items():
                row.editor.set_value(_get(spec, key))
        finally:
            self._updating = False
        self._spec = spec
        self._refresh()

    # ---- internals ----

    def _collect(self):
        top = {}
        sections = {s: {} for s in sections_of(self._spec)}
        for key, row in self._rows.items():
            section, _, name = key.rpartition(".")
            (sections[section] if section else top)[name] = row.editor.value()
        replaced = {s: dataclasses.replace(getattr(self._spec, s), **v) for s, v in sections.items()}
        return dataclasses.replace(self._spec, **top, **replaced)

    def _explained(self, problem: Problem) -> Problem:
        row = self._rows.get(problem.field)
        if row is None or not problem.message.startswith("must be"):
            return Problem(problem.field, problem.message, "error")
        return Problem(
            problem.field,
            f"{row.editor.field.metadata['label']} in the file {problem.message} The form shows the default until you "
            "change it.",
        )

    def _on_editor_edited(self, key: str) -> None:
        if self._updating:
            return
        self._held = [p for p in self._held if p.field != key and p.field in self._rows]
        self._spec = self._collect()
        self._refresh()

    def _refresh(self) -> None:
        spec = self._spec
        for key, row in self._rows.items():
            section, _, name = key.rpartition(".")
            row.set_visible(not section or is_active(spec, section, name))
        problems = [Problem(key, row.editor.parse_error) for key, row in self._rows.items() if row.editor.parse_error]
        problems += self._held + validate(spec)
        words = labels(spec)
        self._problems = sorted((worded(p, words) for p in problems), key=lambda p: p.severity != "error")
        by_field: dict[str, list[Problem]] = {}
        for p in self._problems:
            by_field.setdefault(p.field, []).append(p)
        # Inactive fields are hidden above; ignored ones show, disabled, with the reason. A value validation
        # blames stays editable, or the user could not fix it without first undoing the reason.
        ignored = ignored_fields(spec)
        for toggle, keys in self._advanced:
            if keys & by_field.keys():
                toggle.setChecked(True)  # a problem folded out of sight would be no problem shown at all
        for key, row in self._rows.items():
            row.show_ignored(ignored.get(key), editable=key in by_field)
            row.show_problems(by_field.pop(key, []))
        # Problems of fields the form does not show (the workdir, the spec as a whole) go on top.
        rest = [p for ps in by_field.values() for p in ps]
        self.banner.setVisible(bool(rest))
        self.banner.setText("\n".join(problem_text(p, words) for p in rest))
        self.banner.setStyleSheet(f"color: {theme.BAD};")
        self.problems_changed.emit(self._problems)
        self.spec_changed.emit(spec)


def _disclosure(text: str) -> QToolButton:
    """A flat ▸/▾ button that shows and hides the section's advanced fields."""
    button = QToolButton(text=text, checkable=True, autoRaise=True)  # type: ignore[call-arg]  # a Qt property keyword
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    button.setArrowType(Qt.ArrowType.RightArrow)
    button.toggled.connect(lambda on: button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow))
    return button


def _get(spec, key: str):
    section, _, name = key.rpartition(".")
    return getattr(getattr(spec, section) if section else spec, name)
