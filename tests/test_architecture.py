"""The core imports no Qt; the product never imports the test fakes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"
CORE = [
    "neffbench.spec",
    "neffbench.schema",
    "neffbench.kernels.rope.kernel",
    "neffbench.presets",
    "neffbench.doctor",
    "neffbench.cli.main",
]
OPTIONAL_CORE = [
    "neffbench.neff",
    "neffbench.jobs",
    "neffbench.workers.compile",
    "neffbench.procs",
    "neffbench.kernels.rope.preview",
    "neffbench.taps.report",
]


def _importable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


CHECKED = CORE + [m for m in OPTIONAL_CORE if _importable(m)]
# One fresh interpreter imports each module in turn and names the Qt modules that came with it: a module that
# pulls in Qt is named (one that only shares a dependency with an earlier module that did is found there).
_IMPORT_EACH = """
import importlib, json, sys
qt = lambda: {m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'shiboken6')}
found = {}
for name in sys.argv[1:]:
    before = qt()
    importlib.import_module(name)
    found[name] = sorted(qt() - before)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def qt_pulled_in() -> dict[str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, *CHECKED], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", CHECKED)
def test_core_module_imports_no_qt(module, qt_pulled_in):
    assert qt_pulled_in[module] == [], f"{module} pulls in {','.join(qt_pulled_in[module])}"


def test_product_never_mentions_the_test_fakes():
    offenders = [
        str(p.relative_to(APP))
        for p in APP.rglob("*.py")
        if "tests.fakes" in p.read_text(encoding="utf-8") or "neff_factory" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []


def _imports(path: Path) -> set[str]:
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


@pytest.mark.parametrize(
    "package,above",
    [
        ("schema", ("neffbench.kernels", "neffbench.spec", "neffbench.jobs", "neffbench.sweeps", "neffbench.gui")),
        ("kernels", ("neffbench.spec", "neffbench.jobs", "neffbench.sweeps", "neffbench.runs", "neffbench.cli")),
    ],
)
def test_the_layers_below_the_spec_documents_never_import_up(package, above):
    """schema/ is below the kernels, the kernels below spec documents, jobs and sweeps (lazy imports too); a
    kernel's gui/ folder belongs to the window, above them all."""
    offenders = sorted(
        f"{p.relative_to(APP)}: {name}"
        for p in (APP / package).rglob("*.py")
        if "gui" not in p.relative_to(APP).parts
        for name in _imports(p)
        if name.startswith(above)
    )
    assert offenders == []


def _code_words(path: Path) -> str:
    """The names, attributes, imports and non-docstring strings of a module: what its code says, not its prose."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            words += [getattr(node, "module", None) or "", *(a.name for a in node.names)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.append(node.value)
    return "\n".join(words)


def test_gui_and_cli_name_no_kernel_field():
    """The window, the CLI, jobs, runs, sweeps and the workers ask the kernel; a kernel's own names live in its
    folder (the legacy num_tokens field of old records in views/job.py alone)."""
    words = (
        "rotary",
        "head_size",
        "rope_scaling",
        "hidden_size",
        "intermediate_size",
        "num_tokens",
        "kernels.rope",
        "kernels.rms_norm",
        "kernels.silu_and_mul",
        "kernels.module",
    )
    said = {
        p: _code_words(p) for d in ("gui", "cli", "jobs", "runs", "sweeps", "workers") for p in (APP / d).rglob("*.py")
    }
    offenders = sorted(f"{p.relative_to(APP)}: {w}" for p, code in said.items() for w in words if w in code)
    assert offenders == []


def test_every_module_imports():
    """A name moved away from where another module imports it is caught here, not by the test that happens to
    open that tab (the GUI modules are outside the type checker)."""
    code = (
        "import importlib, pkgutil, neffbench\n"
        "bad = []\n"
        "for m in pkgutil.walk_packages(neffbench.__path__, 'neffbench.'):\n"
        "    if m.name.endswith('__main__'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{m.name}: {exc!r}')\n"
        "print('\\n'.join(bad))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
