"""The core imports no Qt; the product never imports the test fakes."""

from __future__ import annotations

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


@pytest.mark.parametrize("module", CORE + [m for m in OPTIONAL_CORE if _importable(m)])
def test_core_module_imports_no_qt(module):
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'shiboken6'))\n"
        "print(','.join(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"{module} pulls in {proc.stdout.strip()}"


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


def test_gui_and_cli_name_no_kernel_field():
    """The window, the CLI, jobs, runs and sweeps ask the kernel; a kernel's own names live in its folder."""
    words = (
        "rotary",
        "head_size",
        "rope_scaling",
        "hidden_size",
        "intermediate_size",
        "kernels.rope",
        "kernels.rms_norm",
        "kernels.silu_and_mul",
    )
    offenders = sorted(
        f"{p.relative_to(APP)}: {w}"
        for d in ("gui", "cli", "runs", "sweeps")
        for p in (APP / d).rglob("*.py")
        for w in words
        if w in p.read_text(encoding="utf-8")
    )
    assert offenders == []
