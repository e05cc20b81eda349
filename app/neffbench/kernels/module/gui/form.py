"""The module kernel's form: entry and Resolve, generated constructor arguments, inputs, buckets and compiler."""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QCompleter,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from neffbench.gui.forms.field_editors import FieldEditor, editor_for
from neffbench.gui.forms.field_words import labels, problem_text, worded
from neffbench.gui.forms.problem_lines import show_problems
from neffbench.gui.widgets import background, theme
from neffbench.kernels.module import entry as entries
from neffbench.kernels.module.gui.buckets import BucketsEditor
from neffbench.kernels.module.gui.chooser import FileOpener
from neffbench.kernels.module.gui.inputs import InputsEditor
from neffbench.kernels.module.gui.kwargs import KwargsEditor
from neffbench.kernels.module.gui.parts import FieldRow, disclosure, form_layout, group_box
from neffbench.kernels.module.gui.report import NOT_RESOLVED, resolve_entry, summary_html, trial_build, trial_problem
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import CompilerSpec, Problem, anchored_here, is_active, to_dict, validate
from neffbench.spec.ignored import ignored_fields

_JOB = ("name", "seed", "description")
_MODULE = ("entry", "call", "path", "outputs", "state", "examples")
_PLACEHOLDERS = {
    "module.path": "folders, such as src ../lib",
    "module.outputs": "such as logits 0 hidden_states",
    "module.state": "such as layers.0.attn.k_cache layers.0.attn.v_cache",
    "module.examples": "file.py:make_examples",
    "module.entry": "package.module:attr or path/to/file.py:attr",
}


class ModuleForm(QScrollArea):
    """Edits a ModuleCompileSpec. ``spec_changed`` carries the new spec after every edit (or ``set_spec``);
    ``problems_changed`` validation's problems plus fields whose text is not a value yet; ``resolved`` the
    probe's report of each Resolve that was not superseded (also when it failed: ``ok`` is False)."""

    # The inputs table needs room: the window widens the form column to this when it shows the form.
    preferred_width = 600
    # A spec file's values the spec could not hold are refused, not shown here.
    holds_problems = False

    spec_changed = Signal(object)
    problems_changed = Signal(list)
    resolved = Signal(dict)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._spec = ModuleCompileSpec()
        self._rows: dict[str, FieldRow] = {}
        self._problems: list[Problem] = []
        self._updating = False
        self._report: dict[str, Any] | None = None  # the last successful Resolve
        self._token = 0  # the newest Resolve; older results are stale
        self._waiting = False
        self._request_entry = ""
        self._failure: dict[str, Any] | None = None  # the last failed Resolve, shown while its entry is unchanged
        self._tasks = 0  # background calls (resolve, file scans) that have not reported yet
        # The last trial build after a Resolve: the spec it was made from (``_trial_key``) and what the probe said.
        self._trial: tuple[str, dict[str, Any]] | None = None
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        self._body = QVBoxLayout(body)
        self._body.setContentsMargins(6, 6, 6, 6)
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self._body.addWidget(self.banner)
        self._build_job()
        self._build_module()
        self.kwargs = KwargsEditor()
        group_box("Constructor arguments", self._body).addWidget(self.kwargs)
        self.inputs = InputsEditor()
        group_box("Inputs", self._body).addWidget(self.inputs)
        self.buckets = BucketsEditor()
        group_box("Buckets", self._body).addWidget(self.buckets)
        self._build_compiler()
        self._body.addStretch(1)
        self.setWidget(body)
        self._wire()
        self.set_spec(self._spec)

    # ---- building ----

    def _add_rows(
        self,
        prefix: str,
        cls: type,
        names: tuple[str, ...],
        form: QFormLayout,
        advanced: QFormLayout | None = None,
        beside: dict[str, QWidget] | None = None,
    ) -> None:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name not in names:
                continue
            key = f"{prefix}{f.name}"
            editor = editor_for(f, hints[f.name])
            if key in _PLACEHOLDERS:
                assert isinstance(editor.widget, QLineEdit)  # the fields given placeholders are typed as text
                editor.widget.setPlaceholderText(_PLACEHOLDERS[key])
            layout = advanced if advanced is not None and f.metadata["advanced"] else form
            self._rows[key] = FieldRow(key, editor, layout, beside=(beside or {}).get(key))

    def _advanced(self, group: QVBoxLayout) -> QFormLayout:
        toggle = disclosure("Advanced")
        inner = QWidget()
        inner.hide()
        toggle.toggled.connect(inner.setVisible)
        group.addWidget(toggle)
        group.addWidget(inner)
        return form_layout(widget=inner)

    def _build_job(self) -> None:
        group = group_box("Job", self._body)
        form = form_layout(group)
        self._add_rows("", ModuleCompileSpec, _JOB, form, self._advanced(group))

    def _build_module(self) -> None:
        group = group_box("Module", self._body)
        form = form_layout(group)
        self.open_button = QPushButton("Open .py…")
        self.open_button.setObjectName("open-file-button")
        self.open_button.setToolTip("Choose your own .py file, then type (or pick) the attribute after the ':'")
        entry_box = QWidget()
        line = QHBoxLayout(entry_box)
        line.setContentsMargins(0, 0, 0, 0)
        self._add_rows(
            "module.", ModuleSection, _MODULE, form, self._advanced(group), beside={"module.entry": entry_box}
        )
        entry = self._rows["module.entry"].editor.widget
        assert isinstance(entry, QLineEdit)  # a text field
        line.addWidget(entry, 1)
        line.addWidget(self.open_button)
        self._completer = QCompleter(QStringListModel([], self), self)
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        entry.setCompleter(self._completer)
        self.resolve_button = QPushButton("Resolve")
        self.resolve_button.setObjectName("resolve-button")
        self.resolve_button.setToolTip(
            "Read the entry's kind and signatures in a child process; the form then "
            "gets one field per constructor argument and one row per forward parameter"
        )
        self.summary = QLabel(NOT_RESOLVED)
        self.summary.setObjectName("resolve-summary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.resolve_button)
        buttons.addStretch(1)
        form.addRow(buttons)
        form.addRow(self.summary)

    def _build_compiler(self) -> None:
        group = group_box("Compiler", self._body)
        names = tuple(f.name for f in dataclasses.fields(CompilerSpec))
        self._add_rows("compiler.", CompilerSpec, names, form_layout(group), self._advanced(group))

    def _wire(self) -> None:
        for row in self._rows.values():
            row.edited.connect(self._on_part_edited)
        self.kwargs.edited.connect(self._on_part_edited)
        self.inputs.edited.connect(self._on_part_edited)
        self.buckets.edited.connect(self._on_part_edited)
        self.resolve_button.clicked.connect(self.resolve)
        self.opener = FileOpener(self, self._keep)
        self.open_button.clicked.connect(lambda: self.opener.ask(self._spec.module.entry))
        self.opener.listed.connect(self._on_opener_listed)
        self.opener.chosen.connect(self._on_opener_chosen)
        self.opener.unlisted.connect(self._on_opener_unlisted)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_app_focus_changed)

    # ---- public ----

    def spec(self) -> ModuleCompileSpec:
        return self._spec

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def errors(self) -> list[Problem]:
        return [p for p in self._problems if p.severity == "error"]

    def editor(self, key: str) -> FieldEditor:
        """The editor of a generated row: ``name``, ``module.entry``, ``compiler.target``, ``kwargs.<name>``."""
        if key in self._rows:
            return self._rows[key].editor
        name = key.removeprefix("module.").removeprefix("kwargs.")
        found = self.kwargs.editor(name) if key.startswith(("kwargs.", "module.kwargs.")) else None
        if found is None:
            raise KeyError(key)
        return found

    def problem_label(self, key: str) -> QLabel | None:
        return self.findChild(QLabel, f"problem:{key}")

    def field_label(self, key: str) -> QLabel:
        """The label of a generated row (as SpecForm's)."""
        return self._rows[key].label

    @property
    def is_resolving(self) -> bool:
        """A Resolve runs whose result will be shown (superseded ones may still be finishing)."""
        return self._waiting

    @property
    def busy(self) -> bool:
        """Some worker (a Resolve, superseded or not, or a file scan) has not delivered yet."""
        return self._tasks > 0

    def set_spec(self, spec: ModuleCompileSpec) -> None:
        """Show ``spec`` (edits that follow build on it). A signature resolved for another entry is dropped."""
        if self._report is not None and self._report["entry"] != spec.module.entry:
            self._report = None
        if self._waiting and self._request_entry != spec.module.entry:
            self._token += 1  # a Resolve of the old entry: its result no longer applies
            self._waiting = False
        self._updating = True
        try:
            for key, row in self._rows.items():
                row.set_value(_get(spec, key))
            self._show_signature(spec)
        finally:
            self._updating = False
        self._spec = spec
        self._refresh()

    def resolve(self) -> None:
        """Resolve the entry in the warm probe child, from a worker thread; a Resolve still running is superseded."""
        m = self._spec.module
        self._token += 1
        if not m.entry.strip():
            self._on_resolver_returned(
                (
                    self._token,
                    {
                        "ok": False,
                        "entry": "",
                        "error": "Set the entry first: 'package.module:attr' or 'path/to/file.py:attr'.",
                    },
                )
            )
            return
        self._waiting, self._request_entry = True, m.entry
        self._show_summary()
        # Read where a compile reads it: relative paths against the folder the window was started in.
        placed = anchored_here(self._spec).module
        request = {"entry": placed.entry, "kwargs": placed.kwargs, "call": m.call, "path": list(placed.path)}
        self._keep(
            resolve_entry,
            self._token,
            request,
            {"entry": m.entry, "kwargs_checked": m.kwargs},
            returned=self._on_resolver_returned,
            errored=functools.partial(self._on_resolver_errored, self._token),
        )

    def kept_state(self) -> dict[str, Any]:
        """What the form knows beyond its spec, for the next session: the last Resolve of the entry it shows, with the
        entry file's digest (a Resolve of a file edited since is not brought back)."""
        if self._report is None or self._report["entry"] != self._spec.module.entry:
            return {}
        # Its entry and arguments as the spec is kept, with its paths absolute (restore.py).
        placed = anchored_here(self._spec).module
        report = {**self._report, "entry": placed.entry}
        if self._report.get("kwargs_checked") == self._spec.module.kwargs:
            report["kwargs_checked"] = placed.kwargs
        return {"resolved": report, "entry_sha256": _entry_sha256(self._spec)}

    def restore_state(self, state: dict[str, Any]) -> None:
        """The form as ``kept_state`` left it: its Resolve shown (the generated rows, not TOML text) when it is of the
        entry shown and its file is unchanged."""
        report = state.get("resolved")
        if not isinstance(report, dict) or report.get("entry") != self._spec.module.entry:
            return
        if state.get("entry_sha256") != _entry_sha256(self._spec):
            return
        self._on_resolver_returned((self._token, {**report, "earlier": True}))

    def choose_file(self, path: str) -> None:
        """What Open .py… does once a file is picked: its names are read, then offered in ``opener.chooser``."""
        self.opener.read(path)

    # ---- internals ----

    def _keep(self, func: Any, *args: Any, **callbacks: Any) -> None:
        """Start ``func`` on a background thread, counted until it has reported."""
        self._tasks += 1
        background.start(func, *args, finished=self._on_task_finished, **callbacks)

    def _on_task_finished(self) -> None:
        self._tasks -= 1

    def _show_signature(self, spec: ModuleCompileSpec) -> None:
        report = self._report or {}
        factory = report.get("factory") if spec.module.call != "object" else None
        callee = report.get("qualname", "").rpartition(".")[2] if report else ""
        self.kwargs.set_state(factory if report else None, spec.module.kwargs, callee)
        note = report.get("forward_note") or (
            ""
            if report.get("forward") is not None or not report
            else "The forward has no readable signature: add its inputs by hand."
        )
        self.inputs.set_state(report.get("forward") if report else None, spec.inputs, spec.module.constants, note)
        self.buckets.set_value(spec.buckets)

    def _collect(self) -> ModuleCompileSpec:
        values: dict[str, dict[str, Any]] = {"": {}, "module": {}, "compiler": {}}
        for key, row in self._rows.items():
            section, _, name = key.rpartition(".")
            values[section][name] = row.value()
        inputs, constants = self.inputs.value()
        module = dataclasses.replace(
            self._spec.module, **values["module"], kwargs=self.kwargs.value(), constants=constants
        )
        compiler = dataclasses.replace(self._spec.compiler, **values["compiler"])
        return dataclasses.replace(
            self._spec, **values[""], module=module, inputs=inputs, buckets=self.buckets.value(), compiler=compiler
        )

    def _on_part_edited(self) -> None:
        if self._updating:
            return
        self._spec = self._collect()
        self._refresh()

    def _refresh(self) -> None:
        spec = self._spec
        for key, row in self._rows.items():
            section, _, name = key.rpartition(".")
            row.set_visible(section != "compiler" or is_active(spec, section, name))
        current = self._report is not None and self._report["entry"] == spec.module.entry
        problems = [Problem(key, row.editor.parse_error) for key, row in self._rows.items() if row.editor.parse_error]
        problems += self.kwargs.problems(current=current) + self.inputs.problems() + self.buckets.problems()
        if current and self._report is not None and self._report.get("kwargs_checked") == spec.module.kwargs:
            # What only the probe can tell: keys the callable would ignore (for the arguments it was given).
            problems += [
                Problem(p["field"], p["message"], p.get("severity", "error"))
                for p in self._report.get("kwargs_problems") or []
            ]
        if current and self._trial is not None and self._trial[0] == _trial_key(spec) and not self._trial[1].get("ok"):
            # What only making and calling the module tells (a shape the forward refuses), as of the last Resolve.
            problems.append(Problem(*trial_problem(self._trial[1])))
        problems += validate(spec)
        words = labels(spec)
        self._problems = sorted((worded(p, words) for p in problems), key=lambda p: p.severity != "error")
        by_field: dict[str, list[Problem]] = {}
        for p in self._problems:
            by_field.setdefault(p.field, []).append(p)
        ignored = ignored_fields(spec)  # as in SpecForm: disabled with the reason unless validation blames it
        for key, row in self._rows.items():
            row.show_ignored(ignored.get(key), editable=key in by_field)
            show_problems(row.problem, by_field.pop(key, []))
        self.kwargs.show_problems(by_field)
        self.inputs.show_problems(by_field, hold=self._typing_in_tables())
        self.buckets.show_problems(by_field)
        rest = [p for ps in by_field.values() for p in ps]  # the workdir, the spec as a whole
        self.banner.setVisible(bool(rest))
        self.banner.setText("\n".join(problem_text(p, words) for p in rest))
        self.banner.setStyleSheet(f"color: {theme.BAD};")
        self.buckets.show_shapes(spec)
        self._show_summary()
        self.problems_changed.emit(self._problems)
        self.spec_changed.emit(spec)

    def _typing_in_tables(self) -> bool:
        """The focus is in the inputs or the buckets table, whose problems show between the two."""
        focus = QApplication.focusWidget()
        return focus is not None and (self.inputs.isAncestorOf(focus) or self.buckets.isAncestorOf(focus))

    def _on_app_focus_changed(self, _old: QWidget | None, _new: QWidget | None) -> None:
        # Left the tables: the inputs' problem lines, held while the user typed, fit their lines again.
        if self.inputs.problem.minimumHeight() and not self._typing_in_tables():
            by_field: dict[str, list[Problem]] = {}
            for p in self._problems:
                by_field.setdefault(p.field, []).append(p)
            self.inputs.show_problems(by_field)

    def _show_summary(self) -> None:
        self.summary.setText(
            summary_html(self._waiting, self._request_entry, self._failure, self._report, self._spec.module.entry)
        )

    def _on_resolver_returned(self, result: tuple[int, dict[str, Any]]) -> None:
        token, report = result
        if token != self._token:
            return  # superseded by a newer Resolve (or a new spec)
        self._waiting = False
        self._failure = None if report.get("ok") else report
        if report.get("ok"):
            self._report = report
            self._updating = True
            try:
                self._show_signature(self._spec)
            finally:
                self._updating = False
            self._spec = self._collect()
            self._refresh()
            if not report.get("earlier") and not self.errors() and (self._spec.inputs or self._spec.module.examples):
                self._start_trial()
        else:
            self._show_summary()
        self.resolved.emit(report)

    def _start_trial(self) -> None:
        """Make the module and call it on the example inputs in the probe, so that a mismatch shows now."""
        key = _trial_key(self._spec)
        self._keep(
            trial_build,
            self._token,
            key,
            {"spec": to_dict(anchored_here(self._spec))},
            returned=self._on_trial_returned,
        )

    def _on_trial_returned(self, result: tuple[int, str, dict[str, Any]]) -> None:
        token, key, found = result
        if token != self._token:
            return  # a newer Resolve (or spec) came since
        self._trial = (key, found)
        self._refresh()

    def _on_resolver_errored(self, token: int, exc: Exception) -> None:
        entry = self._spec.module.entry
        self._on_resolver_returned((token, {"ok": False, "entry": entry, "error": f"{type(exc).__name__}: {exc}"}))

    def _on_opener_listed(self, path: str, names: list[str]) -> None:
        model = self._completer.model()
        assert isinstance(model, QStringListModel)  # the one made with the completer
        model.setStringList([f"{path}:{n}" for n in names])

    def _on_opener_chosen(self, entry: str) -> None:
        self._rows["module.entry"].edit(entry)
        self.resolve()  # a name was picked: its signature is the next thing to see

    def _on_opener_unlisted(self, path: str, why: str) -> None:
        """Nothing to pick: the entry gets ``path:`` to type after, and the summary says why."""
        row = self._rows["module.entry"]
        if path:
            row.edit(f"{path}:")
            row.editor.widget.setFocus()
        self._failure = {"entry": self._spec.module.entry, "error": why}
        self._show_summary()


def _trial_key(spec: ModuleCompileSpec) -> str:
    """What a trial build depends on: the module, its arguments, inputs and buckets (not the name or compiler)."""
    made = {"module": dataclasses.asdict(spec.module), "inputs": spec.inputs, "buckets": spec.buckets}
    return json.dumps(made, sort_keys=True, default=str)


def _entry_sha256(spec: ModuleCompileSpec) -> str | None:
    """The entry file's sha256 (read, never run); None for a package's entry."""
    try:
        return entries.file_sha256(entries.parse(anchored_here(spec).module.entry))
    except entries.EntryError:
        return None


def _get(spec: ModuleCompileSpec, key: str) -> Any:
    section, _, name = key.rpartition(".")
    return getattr(getattr(spec, section) if section else spec, name)
