"""A new kernel is one folder: written here into tmp_path with its entry point and nothing edited elsewhere,
it is listed, checked and compiled by the CLI, offered by the window's form and preset menu, and passes
the contract test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli import neffbench

REPO = Path(__file__).resolve().parents[1]
NAME = "triple"

KERNEL_PY = '''
"""y = 3 * x: the smallest kernel there is, written by the test as a user would."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.kernels.api import Built, TensorSig
from neffbench.kernels.token import TokenKernel, token_inputs
from neffbench.schema import kernel_spec, ui


@dataclass(frozen=True)
class TripleSection:
    width: int = field(default=8, metadata=ui("Width", "Elements per row.", min=1, max=1024))


@token_inputs(tokens=(2,), per_call="Rows per call.", dtype_help="Dtype of x.")
class TripleInputs:
    """The example input."""


@kernel_spec("triple")
class TripleSpec:
    triple: TripleSection = field(default_factory=TripleSection)
    inputs: TripleInputs = field(default_factory=TripleInputs)


class TripleKernel(TokenKernel):
    name = "triple"
    title = "Triple (one folder)"
    summary = "y = 3 * x."
    spec_class = TripleSpec
    preset_dir = Path(__file__).resolve().parent / "presets"

    def io_signature(self, spec: Any) -> Any:
        shape = (spec.inputs.num_tokens[0], spec.triple.width)
        return [TensorSig("input0", "x", spec.inputs.dtype, shape)], [TensorSig("output0", "y", spec.inputs.dtype, shape)]

    def build(self, spec: Any) -> Built:
        import torch

        class Triple(torch.nn.Module):
            def forward(self, x):
                return x * 3

        return Built(Triple().eval(), self.example_inputs(spec), ("x",), ("y",))

    def example_inputs(self, spec: Any) -> tuple[Any, ...]:
        import torch

        g = torch.Generator().manual_seed(spec.inputs.seed)
        x = torch.randn(spec.inputs.num_tokens[0], spec.triple.width, generator=g)
        return (x.to(getattr(torch, spec.inputs.dtype)),)

    def reproduce_source(self, spec: Any, built: Built) -> str:
        n, w, seed, dtype = spec.inputs.num_tokens[0], spec.triple.width, spec.inputs.seed, spec.inputs.dtype
        return (f"def build_module():\\n    class Triple(torch.nn.Module):\\n        def forward(self, x):\\n"
                f"            return x * 3\\n    return Triple()\\n\\n\\n"
                f"def example_inputs():\\n    g = torch.Generator().manual_seed({seed})\\n"
                f"    return (torch.randn({n}, {w}, generator=g).to(torch.{dtype}),)\\n")


KERNEL = TripleKernel()
'''

PRESET = """# A preset the kernel's folder brings.
kernel = "triple"
name = "triple-wide"
description = "Triple: a wider row."

[triple]
width = 64

[inputs]
num_tokens = [4]
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The kernel's folder, and the entry point that names it (what ``pip install`` of it would write)."""
    root = tmp_path_factory.mktemp("new-kernel")
    package = root / "triple_kernel"
    (package / "presets").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The triple kernel."""\n')
    (package / "kernel.py").write_text(textwrap.dedent(KERNEL_PY).lstrip())
    (package / "presets" / "triple-wide.toml").write_text(PRESET)
    info = root / "triple_kernel-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: triple-kernel\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[neffbench.kernels]\n{NAME} = triple_kernel.kernel:KERNEL\n")
    return root


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}


def _cli(site: Path, *args: str) -> subprocess.CompletedProcess:
    return neffbench(*args, env=_env(site))


@pytest.mark.slow
def test_the_cli_lists_checks_and_compiles_the_new_kernel(site, tmp_path):
    listing = _cli(site, "kernel", "list")
    assert listing.returncode == 0, listing.stderr
    assert "Triple (one folder)  [plugin: triple-kernel]" in listing.stdout
    assert "presets: triple-wide" in listing.stdout
    checked = _cli(site, "check", "triple-wide", "--width", "0")
    assert checked.returncode == 2 and "error: triple.width: Width must be between 1 and 1024; got 0." in checked.stderr
    compiled = _cli(site, "compile", "triple-wide", "--workdir", str(tmp_path), "--backend", "cpu-check")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert "numerics on CPU (torch.jit trace; no NEFF, cpu-check): match" in compiled.stdout


@pytest.mark.slow
def test_the_contract_test_checks_the_new_kernel(site):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "--cold-workers",  # it starts no worker: no warm-start server (a torch import) for it either
            str(REPO / "tests" / "test_kernel_contract.py"),
            "-k",
            NAME,
        ],
        cwd=REPO,
        env=_env(site),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout


@pytest.mark.gui
def test_the_window_offers_the_new_kernel_and_its_preset(site, make_window, monkeypatch):
    from neffbench.kernels import registry

    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(registry._loaded, NAME, raising=False)
    try:
        window = make_window()
        combo = window.form.kernel_combo
        assert NAME in [combo.itemData(i) for i in range(combo.count())]
        window.apply_preset("triple-wide")
        assert window.form.kernel == NAME
        assert window.form.editor("triple.width").value() == 64
        assert window.form.spec().triple.width == 64
    finally:
        registry._loaded.pop(NAME, None)
        for module in [m for m in sys.modules if m.split(".")[0] == "triple_kernel"]:
            del sys.modules[module]
