"""The core imports no Qt; the product never imports the test fakes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"
CORE = ["neffbench.spec", "neffbench.kernels.rope", "neffbench.kernels.build", "neffbench.presets",
        "neffbench.doctor", "neffbench.cli.main"]
OPTIONAL_CORE = ["neffbench.neff", "neffbench.jobs", "neffbench.workers.compile", "neffbench.procs", "neffbench.preview"]


def _importable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("module", CORE + [m for m in OPTIONAL_CORE if _importable(m)])
def test_core_module_imports_no_qt(module):
    code = (f"import sys, {module}\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'shiboken6'))\n"
            "print(','.join(bad))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"{module} pulls in {proc.stdout.strip()}"


def test_product_never_mentions_the_test_fakes():
    offenders = [str(p.relative_to(APP)) for p in APP.rglob("*.py")
                 if "tests.fakes" in p.read_text(encoding="utf-8") or "neff_factory" in p.read_text(encoding="utf-8")]
    assert offenders == []
