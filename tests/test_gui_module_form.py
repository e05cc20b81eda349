"""The module form: generated from a Resolve in a probe child, inputs and buckets as tables, exact round trips."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

from neffbench.gui.forms.field_editors import NumberBox
from neffbench.gui.widgets import theme
from neffbench.kernels.module.gui.form import ModuleForm
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import dumps_toml, loads_toml

pytestmark = pytest.mark.gui

RESOLVE_TIMEOUT_MS = 60_000  # the first Resolve starts the warm probe child, which imports torch
CORPUS_MLP = Path(__file__).parent / "data" / "modules" / "mlp.py"
_OWN_MLP = """
from typing import Literal

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int, activation: str, bias: bool, dropout: float):
        super().__init__()
        self.up = nn.Linear(hidden_size, intermediate_size, bias=bias)
        self.down = nn.Linear(intermediate_size, hidden_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def make_mlp(hidden_size: int = 64, intermediate_size: int = 128,
             activation: Literal["gelu", "silu", "relu"] = "silu", bias: bool = True, dropout: float = 0.0):
    return MLP(hidden_size, intermediate_size, activation, bias, dropout).eval()
"""

ROUND_TRIP_TOML = """
kernel = "module"
name = "tiny-bert"
seed = 7

[module]
entry = "transformers:BertModel"
call = "factory"
outputs = ["last_hidden_state"]

[module.kwargs]
add_pooling_layer = false
config = { entry = "transformers:BertConfig", kwargs = { hidden_size = 64, num_hidden_layers = 2, layer_norm_eps = 1e-12 } }

[module.constants]
return_dict = false
use_cache = false

[inputs]
input_ids = "i64[{batch},{seq}] randint(0, 1000)"
attention_mask = "i64[{batch},{seq}] ones"

[buckets]
batch = [1, 4]
seq = [128, 512]

[compiler]
target = "trn2"
timeout = 1.5
"""


@pytest.fixture
def mlp_file(tmp_path) -> Path:
    """The corpus's mlp.py, or a small one of our own when the corpus is not there."""
    if CORPUS_MLP.is_file():
        return CORPUS_MLP
    path = tmp_path / "mlp.py"
    path.write_text(_OWN_MLP, encoding="utf-8")
    return path


@pytest.fixture(scope="module", autouse=True)
def _warm_probe():
    """Resolve uses the process's warm probe child: stop it when this module's tests are done."""
    yield
    from neffbench.probe.client import close_shared

    close_shared()


@pytest.fixture
def form(qtbot):
    form = ModuleForm()
    qtbot.addWidget(form)
    form.resize(900, 1200)
    form.show()
    qtbot.waitExposed(form)
    yield form
    # Superseded Resolves still finish in their threads: let them deliver before the widgets go.
    qtbot.waitUntil(lambda: not form.busy, timeout=RESOLVE_TIMEOUT_MS)


def _resolve(qtbot, form: ModuleForm, entry: str) -> dict:
    form.set_spec(dataclasses.replace(form.spec(), module=ModuleSection(entry=entry)))
    with qtbot.waitSignal(form.resolved, timeout=RESOLVE_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(form.findChild(QPushButton, "resolve-button"), Qt.MouseButton.LeftButton)
    return blocker.args[0]


def _type(qtbot, edit: QLineEdit, text: str) -> None:
    edit.clear()
    qtbot.keyClicks(edit, text)


def _no_user_code_here() -> bool:
    return not any(name.startswith("neffbench_user_") for name in sys.modules)


def test_a_factory_gets_one_field_per_parameter_after_resolve(qtbot, form, mlp_file):
    report = _resolve(qtbot, form, f"{mlp_file}:make_mlp")
    assert report["ok"], report
    assert _no_user_code_here()
    summary = form.findChild(QLabel, "resolve-summary").text()
    assert "make_mlp" in summary and "hidden_size: int = 64" in summary and "(x: Tensor)" in summary

    hidden = form.findChild(NumberBox, "kwargs.hidden_size")
    activation = form.findChild(QComboBox, "kwargs.activation")
    bias = form.findChild(QCheckBox, "kwargs.bias")
    dropout = form.findChild(QLineEdit, "kwargs.dropout")
    assert form.editor("kwargs.hidden_size").widget is hidden
    assert hidden.value() == 64 and "int = 64" in hidden.toolTip()
    assert [activation.itemText(i) for i in range(activation.count())] == ["gelu", "silu", "relu"]
    assert activation.currentText() == "silu" and bias.isChecked()
    assert form.spec().module.kwargs == {}  # defaults are not written

    with qtbot.waitSignal(form.spec_changed, timeout=30_000):
        hidden.setValue(256)
    activation.setCurrentText("gelu")
    bias.setChecked(False)
    _type(qtbot, dropout, "1e-6")
    assert form.spec().module.kwargs == {"hidden_size": 256, "activation": "gelu", "bias": False, "dropout": 1e-6}

    qtbot.mouseClick(form.findChild(QToolButton, "kwargs.hidden_size.default"), Qt.MouseButton.LeftButton)
    assert "hidden_size" not in form.spec().module.kwargs and hidden.value() == 64

    _type(qtbot, dropout, "a lot")
    assert form.problem_label("module.kwargs.dropout").isVisible()
    assert any(p.field == "module.kwargs.dropout" for p in form.errors())
    _type(qtbot, dropout, "0.25")
    assert not form.problem_label("module.kwargs.dropout").isVisible()
    assert form.spec().module.kwargs["dropout"] == 0.25


def test_inputs_and_buckets_after_resolve(qtbot, form, mlp_file):
    assert _resolve(qtbot, form, f"{mlp_file}:make_mlp")["ok"]
    use = form.findChild(QComboBox, "inputs.x.use")
    assert use is not None and use.currentText() == "tensor"
    assert "x" in form.spec().inputs

    form.findChild(QComboBox, "inputs.x.dtype").setCurrentText("bfloat16")
    _type(qtbot, form.findChild(QLineEdit, "inputs.x.shape"), "{batch},{seq},64")
    _type(qtbot, form.findChild(QLineEdit, "inputs.x.init"), "rand(-1, 1)")
    assert form.spec().inputs == {"x": "bfloat16[{batch},{seq},64] rand(-1, 1)"}
    inputs_problem = form.problem_label("inputs")
    assert inputs_problem.isVisible() and "not a Buckets axis" in inputs_problem.text()

    shapes = form.findChild(QPlainTextEdit, "shapes")
    for axis, values in (("batch", "1, 8"), ("seq", "128")):
        # Add axis offers the axis the inputs' error names (batch, then seq): only the values are left to type.
        assert f"{{{axis}}}" in inputs_problem.text()
        qtbot.mouseClick(form.findChild(QPushButton, "add-axis-button"), Qt.MouseButton.LeftButton)
        assert form.findChild(QLineEdit, f"buckets.{axis}.name").text() == axis
        _type(qtbot, form.findChild(QLineEdit, f"buckets.{axis}"), values)
    assert form.spec().buckets == {"batch": (1, 8), "seq": (128,)}
    assert not inputs_problem.text()  # gone (its place kept while the user types in the buckets)
    assert "batch=8, seq=128  →  x: bfloat16[8,128,64] rand(-1, 1)" in shapes.toPlainText()
    assert "batch=1, seq=128" in shapes.toPlainText()

    _type(qtbot, form.findChild(QLineEdit, "buckets.seq"), "128, 512")
    assert "x: bfloat16[8,512,64]" in shapes.toPlainText()  # updated as the user types

    # An axis the buckets do not have: the problem shows under the inputs table, in the error colour.
    _type(qtbot, form.findChild(QLineEdit, "inputs.x.shape"), "{tokens},64")
    assert inputs_problem.isVisible() and "{tokens}" in inputs_problem.text()
    assert (
        "not a Buckets axis" in inputs_problem.text() and "[buckets]" not in inputs_problem.text()
    )  # the form's words
    assert theme.PROBLEM_COLOURS["error"] in inputs_problem.styleSheet()
    assert any(p.field == "inputs.x" for p in form.errors())
    assert "axis 'tokens'" in shapes.toPlainText()

    use.setCurrentText("constant")  # a tensor row can become a constant
    _type(qtbot, form.findChild(QLineEdit, "inputs.x.value"), "0.5")
    assert "x" not in form.spec().inputs and form.spec().module.constants == {"x": 0.5}


def test_a_bad_entry_shows_the_resolve_error(qtbot, form, tmp_path, mlp_file):
    missing = tmp_path / "nowhere.py"
    report = _resolve(qtbot, form, f"{missing}:Model")
    assert not report["ok"]
    summary = form.findChild(QLabel, "resolve-summary")
    assert "does not exist" in summary.text() and theme.BAD in summary.text()
    assert form.problem_label("module.entry").isVisible()  # validation says so too, under the entry

    report = _resolve(qtbot, form, f"{mlp_file}:Nope")
    assert not report["ok"] and "has no attribute 'Nope'" in report["error"]
    assert "has no attribute" in summary.text() and "make_mlp" in summary.text()
    assert _no_user_code_here()


def test_a_second_resolve_supersedes_the_first(qtbot, form, tmp_path, mlp_file):
    reports = []
    form.resolved.connect(reports.append)
    form.set_spec(ModuleCompileSpec(module=ModuleSection(entry=f"{mlp_file}:GatedMLP")))
    form.resolve()  # imports torch in its child: slow
    missing = f"{tmp_path / 'nowhere.py'}:Model"
    form.set_spec(ModuleCompileSpec(module=ModuleSection(entry=missing)))
    with qtbot.waitSignal(form.resolved, timeout=RESOLVE_TIMEOUT_MS):
        form.resolve()
    qtbot.waitUntil(lambda: not form.busy, timeout=RESOLVE_TIMEOUT_MS)
    assert [r["entry"] for r in reports] == [missing]
    assert form.findChild(NumberBox, "kwargs.hidden_size") is None  # GatedMLP's signature never applied


def test_a_spec_from_toml_round_trips_without_resolve(qtbot, form):
    spec = loads_toml(ROUND_TRIP_TOML)
    with qtbot.waitSignal(form.spec_changed, timeout=30_000) as blocker:
        form.set_spec(spec)
    assert blocker.args[0] == spec
    assert form.spec() == spec and dumps_toml(form.spec()) == dumps_toml(spec)

    config = form.findChild(QLineEdit, "kwargs.config")
    assert config.text() == (
        '{ entry = "transformers:BertConfig", kwargs = { hidden_size = 64, '
        "num_hidden_layers = 2, layer_norm_eps = 1e-12 } }"
    )
    assert form.findChild(QLineEdit, "kwargs.add_pooling_layer").text() == "false"
    assert form.findChild(QComboBox, "inputs.input_ids.dtype").currentText() == "int64"
    assert form.findChild(QLineEdit, "inputs.input_ids.shape").text() == "{batch},{seq}"
    assert form.findChild(QLineEdit, "inputs.return_dict.value").text() == "false"
    assert form.findChild(QLineEdit, "buckets.seq").text() == "128, 512"

    # An edit elsewhere keeps everything else exactly as it was read (aliases, float timeout, order).
    _type(qtbot, form.editor("name").widget, "renamed")
    assert form.spec() == dataclasses.replace(spec, name="renamed")
    assert dumps_toml(form.spec()) == dumps_toml(spec).replace('"tiny-bert"', '"renamed"')
    assert form.findChild(QLabel, "resolve-summary").text().startswith("Not resolved")

    _type(qtbot, config, '{ entry = "transformers:BertConfig", kwargs = { hidden_size = 32 } }')
    assert form.spec().module.kwargs["config"] == {"entry": "transformers:BertConfig", "kwargs": {"hidden_size": 32}}
    _type(qtbot, config, "{ entry = ")
    assert form.problem_label("module.kwargs.config").isVisible()
    assert any(p.field == "module.kwargs.config" for p in form.errors())


def test_problems_show_under_their_fields(qtbot, form):
    form.set_spec(ModuleCompileSpec(module=ModuleSection(entry="torch.nn:Linear")))
    has_name_problem = lambda problems: any(p.field == "name" for p in problems)  # noqa: E731
    with qtbot.waitSignal(form.problems_changed, timeout=30_000, check_params_cb=has_name_problem):
        _type(qtbot, form.editor("name").widget, "bad name!")
    label = form.problem_label("name")
    assert label.isVisible() and label.wordWrap() and "Name must be" in label.text()
    assert form.problem_label("inputs").isVisible()  # no inputs yet
    assert {p.severity for p in form.errors()} == {"error"}
    for key in ("name", "seed", "module.entry", "module.call", "compiler.target"):
        assert form.editor(key).widget.objectName() == key
    for name in ("inputs-table", "buckets-table", "resolve-button"):
        assert form.findChild(object, name) is not None, name


def test_add_input_by_hand_and_open_file(qtbot, form, mlp_file):
    qtbot.mouseClick(form.findChild(QPushButton, "add-input-button"), Qt.MouseButton.LeftButton)
    _type(qtbot, form.findChild(QLineEdit, "inputs..name"), "x")
    _type(qtbot, form.findChild(QLineEdit, "inputs.x.shape"), "2,16")
    assert form.spec().inputs == {"x": "float32[2,16]"}
    qtbot.mouseClick(form.findChild(QToolButton, "inputs.x.remove"), Qt.MouseButton.LeftButton)
    assert form.spec().inputs == {}

    form.choose_file(str(mlp_file))  # what "Open .py…" does after its dialog
    chooser = _chooser(qtbot, form)
    rows = [chooser.list.item(i).text() for i in range(chooser.list.count())]
    assert any(r.startswith("MLP   (class, line ") for r in rows), rows
    assert any(r.startswith("make_mlp   (function, line ") for r in rows), rows
    entry = form.editor("module.entry").widget
    model = entry.completer().model()
    names = {model.index(i).data() for i in range(model.rowCount())}
    assert f"{mlp_file}:make_mlp" in names and f"{mlp_file}:MLP" in names
    assert _no_user_code_here()  # read with ast, never run
    chooser.choose("make_mlp")
    with qtbot.waitSignal(form.resolved, timeout=RESOLVE_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(chooser.choose_button, Qt.MouseButton.LeftButton)
    assert entry.text() == f"{mlp_file}:make_mlp" and form.spec().module.entry == f"{mlp_file}:make_mlp"
    assert blocker.args[0]["ok"], blocker.args[0]  # picked, then resolved: the signature is there at once
    assert form.findChild(NumberBox, "kwargs.hidden_size") is not None
    assert _no_user_code_here()


def _chooser(qtbot, form):
    qtbot.waitUntil(lambda: form.opener.chooser is not None and form.opener.chooser.isVisible(), timeout=10_000)
    return form.opener.chooser


def test_cancelling_the_chooser_keeps_the_entry(qtbot, form, mlp_file):
    form.set_spec(ModuleCompileSpec(module=ModuleSection(entry="torch.nn:Linear")))
    form.choose_file(str(mlp_file))
    chooser = _chooser(qtbot, form)
    qtbot.keyClick(chooser.list, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not chooser.isVisible(), timeout=30_000)
    assert form.spec().module.entry == "torch.nn:Linear"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("def broken(:\n    pass\n", "has a syntax error at line 1"),
        ("import torch\n_private = 1\n", "defines no public class, function or object to compile"),
    ],
)
def test_a_file_with_nothing_to_pick_says_why_and_leaves_the_name_to_type(qtbot, form, tmp_path, text, why):
    path = tmp_path / "odd.py"
    path.write_text(text, encoding="utf-8")
    form.choose_file(str(path))
    summary = form.findChild(QLabel, "resolve-summary")
    qtbot.waitUntil(lambda: why in summary.text(), timeout=10_000)
    assert "Type the name to compile after the" in summary.text()
    assert form.spec().module.entry == f"{path}:" and form.opener.chooser is None


def test_a_misspelt_key_of_a_nested_config_shows_under_its_argument(qtbot, form, tmp_path):
    """A config class that keeps any keyword would ignore ``dpeth``: after a Resolve the form says so, with a
    "did you mean", under the argument that builds the config, and blocks the compile like any error."""
    (tmp_path / "cfg.py").write_text(
        "from torch import nn\n\n\nclass Settings:\n    def __init__(self, width: int = 4, **kwargs):\n"
        "        self.width = width\n        self.depth = 1\n        self.__dict__.update(kwargs)\n\n\n"
        "def make(settings):\n    return nn.Linear(settings.width, settings.width)\n"
    )
    settings = {"entry": f"{tmp_path / 'cfg.py'}:Settings", "kwargs": {"width": 4, "dpeth": 2}}
    spec = ModuleCompileSpec(
        module=ModuleSection(entry=f"{tmp_path / 'cfg.py'}:make", kwargs={"settings": settings}),
        inputs={"input": "f32[2,4]"},
    )
    form.set_spec(spec)
    with qtbot.waitSignal(form.resolved, timeout=RESOLVE_TIMEOUT_MS) as blocker:
        form.resolve()
    assert blocker.args[0]["ok"], blocker.args[0]
    messages = [p.message for p in form.errors()]
    assert any("'dpeth' is not something Settings knows" in m and "Did you mean 'depth'?" in m for m in messages)
    shown = [label.text() for label in form.findChildren(QLabel) if "dpeth" in label.text() and label.isVisible()]
    assert shown, "the problem is not shown in the form"
    # Fixed: the problem goes once the arguments change (a Resolve's findings hold for the arguments it saw).
    fixed = dataclasses.replace(
        form.spec(),
        module=dataclasses.replace(
            form.spec().module, kwargs={"settings": {**settings, "kwargs": {"width": 4, "depth": 2}}}
        ),
    )
    form.set_spec(fixed)
    assert not any("dpeth" in p.message for p in form.errors())


def _table_spec() -> ModuleCompileSpec:
    return dataclasses.replace(
        ModuleCompileSpec(),
        module=ModuleSection(entry="model.py:Model"),
        inputs={"x": "f32[{seq},4]", "y": "f32[4]"},
        buckets={"seq": (1, 2)},
    )


def test_tab_from_a_table_cell_goes_on_to_the_next_field(qtbot, form):
    form.set_spec(_table_spec())
    form.activateWindow()
    steps = [
        ("inputs.y.init", "add-input-button"),  # the last cell of the inputs, then the button under them
        ("add-input-button", "buckets.seq.name"),  # on into the buckets
        ("buckets.seq.remove", "add-axis-button"),
    ]
    for start, expected in steps:
        widget = form.findChild(QWidget, start)
        widget.setFocus()
        qtbot.waitUntil(widget.hasFocus, timeout=5_000)
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
        qtbot.waitUntil(lambda expected=expected: QApplication.focusWidget().objectName() == expected, timeout=5_000)


def test_typing_an_axis_name_does_not_move_the_table_under_the_pointer(qtbot, form):
    form.set_spec(dataclasses.replace(_table_spec(), buckets={}))
    form.activateWindow()
    problem = form.problem_label("inputs")
    assert "{seq}" in problem.text()  # the inputs name an axis the buckets do not have yet
    qtbot.mouseClick(form.findChild(QPushButton, "add-axis-button"), Qt.MouseButton.LeftButton)
    name = form.findChild(QLineEdit, "buckets.seq.name")  # offered by Add axis; the user types it over
    name.setFocus()
    qtbot.waitUntil(name.hasFocus, timeout=5_000)
    name.selectAll()
    # The inputs' problem line sits between the two tables: were it to go as the axis is completed, the buckets
    # table (and the row being typed in) would move up under the pointer.
    height = problem.height()
    for ch in "seq":
        qtbot.keyClicks(name, ch)
        kept = max(problem.minimumHeight(), problem.sizeHint().height())
        assert problem.isVisible() and kept >= height, f"the line shrank after {ch!r}"
    assert "seq" in form.spec().buckets and "{seq}" not in problem.text()
    # Once the user moves on, the emptied problem line goes.
    form.editor("name").widget.setFocus()
    qtbot.waitUntil(lambda: not problem.isVisible(), timeout=5_000)


def test_the_chooser_preselects_the_top_module_and_is_skipped_for_one(qtbot, form, tmp_path):
    layered = tmp_path / "layered.py"
    layered.write_text(
        "from torch import nn\n\n\nclass Block(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = Block()\n\n"
        "    def forward(self, x):\n        return self.block(x)\n\n\ndef helper(x):\n    return x\n",
        encoding="utf-8",
    )
    form.choose_file(str(layered))
    chooser = _chooser(qtbot, form)
    assert chooser.entry() == f"{layered}:Model"  # not Block, the first listed: Model uses it
    qtbot.keyClick(chooser.list, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not chooser.isVisible(), timeout=30_000)

    single = tmp_path / "single.py"
    single.write_text(
        "from torch import nn\n\n\ndef helper(x):\n    return x\n\n\n"
        "class Only(nn.Module):\n    def forward(self, x):\n        return x\n",
        encoding="utf-8",
    )
    form.opener.chooser = None
    with qtbot.waitSignal(form.resolved, timeout=RESOLVE_TIMEOUT_MS) as blocker:
        form.choose_file(str(single))  # one module class: nothing to choose, it is resolved at once
    assert form.spec().module.entry == f"{single}:Only" and blocker.args[0]["ok"], blocker.args[0]
    assert form.opener.chooser is None


def test_a_shape_or_constructor_mismatch_is_found_when_the_form_is_resolved(qtbot, form):
    form.set_spec(dataclasses.replace(form.spec(), inputs={"x": "f32[2,16]"}))
    assert _resolve(qtbot, form, f"{CORPUS_MLP}:make_mlp")["ok"]  # hidden_size 64 by default: x's 16 does not fit
    qtbot.waitUntil(lambda: not form.busy, timeout=RESOLVE_TIMEOUT_MS)
    inputs_problem = form.problem_label("inputs")
    assert inputs_problem.isVisible(), "found at Resolve, not only at compile"
    assert "Called on these example inputs, the module fails" in inputs_problem.text()
    assert "mat1 and mat2 shapes cannot be multiplied (2x16 and 64x128)" in inputs_problem.text()
    assert any(p.field == "inputs" for p in form.errors())
    form.editor("kwargs.hidden_size").set_value(16)  # an edit since: the verdict no longer applies until a Resolve
    form.editor("kwargs.hidden_size").edited.emit()
    qtbot.waitUntil(lambda: "mat1" not in inputs_problem.text(), timeout=5_000)

    form.set_spec(
        dataclasses.replace(
            form.spec(),
            module=ModuleSection(
                entry=f"{CORPUS_MLP}:MLP",
                kwargs={"hidden_size": 16, "intermediate_size": 8, "activation": "swish", "bias": True, "dropout": 0.0},
            ),
        )
    )
    with qtbot.waitSignal(form.resolved, timeout=RESOLVE_TIMEOUT_MS):
        form.resolve()
    qtbot.waitUntil(lambda: not form.busy, timeout=RESOLVE_TIMEOUT_MS)
    kwargs_problem = form.findChild(QLabel, "problem:module.kwargs")
    assert kwargs_problem.isVisible() and "Made with these arguments, the module fails" in kwargs_problem.text()
    assert "swish" in kwargs_problem.text()
