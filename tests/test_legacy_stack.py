"""What pyproject.toml promises is what `make test-legacy` tests; the code keeps to Python 3.10; doctor tells the stack."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from neffbench.spec.files import tomllib

REPO = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO / "packaging" / "legacy-constraints.txt"


def _requirement(text: str) -> tuple[str, str | None]:
    """``("numpy", "1.26.4")`` from ``numpy>=1.26.4`` (the floor), with any marker or other clause dropped."""
    name = re.match(r"[A-Za-z0-9_.-]+", text)[0]
    floor = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", text)
    return name.lower(), floor[1] if floor else None


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _pins() -> dict[str, str]:
    pins = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def test_the_legacy_venv_installs_exactly_the_floors_pyproject_promises():
    project = _pyproject()["project"]
    floors = dict(_requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["test"]])
    torch_floor = floors.pop("torch")
    assert all(floors.values()), f"every dependency has a floor: {floors}"
    assert _pins() == floors, "packaging/legacy-constraints.txt must pin each floor of pyproject.toml"
    # torch comes from the Makefile: LEGACY_TORCH (2.9.1, make test-legacy) and LEGACY_TORCH_FLOOR (the floor's
    # release, make test-legacy-torch-floor); never a ceiling, so a Neuron venv keeps its own torch.
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    tested_floor = re.search(r"^LEGACY_TORCH_FLOOR := torch==(\S+)$", makefile, re.M)[1]
    assert tested_floor.split(".")[:2] == torch_floor.split(".")[:2]
    assert re.search(r"^LEGACY_TORCH \?= torch==2\.9\.1$", makefile, re.M)
    assert project["requires-python"] == ">=3.10"


def _tomllib_imports(tree: ast.AST) -> list[ast.Import]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import) and any(a.name == "tomllib" for a in n.names)]


def _imports_tomli(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Import) and any(a.name == "tomli" for a in n.names) for n in body)


def test_every_tomllib_import_falls_back_to_tomli():
    """vermin below is told to ignore tomllib (it misreads ``except ModuleNotFoundError``), so this checks
    instead that every ``import tomllib`` has tomli beside it (a try's handler, or an if's else), as on
    Python 3.10 it must."""
    dynamic = "__import__(" + '"tomllib")'
    bare = []
    for path in [*REPO.joinpath("app").rglob("*.py"), *REPO.joinpath("tests").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        if "tomllib" not in text:  # neither kind of import (most files: parsing each would be most of this test)
            continue
        tree = ast.parse(text)
        guarded = set()
        for node in ast.walk(tree):
            if (isinstance(node, ast.Try) and any(_imports_tomli(h.body) for h in node.handlers)) or (
                isinstance(node, ast.If) and _imports_tomli(node.orelse)
            ):
                guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
        bare += [f"{path.relative_to(REPO)}:{n.lineno}" for n in _tomllib_imports(tree) if id(n) not in guarded]
        bare += [f"{path.relative_to(REPO)}: {dynamic}"] if dynamic in text else []
    assert bare == []


def test_app_and_tests_keep_to_python_3_10():
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, vermin; sys.exit(vermin.main())",
            "--target=3.10-",
            "--violations",
            "--no-tips",
            "-q",
            "--eval-annotations",
            "--exclude",
            "tomllib",
            "app",
            "tests",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


# ---- neffbench doctor: which stack, and the known bad combinations ----


def test_doctor_says_which_stack_it_sees_and_warns_with_the_remedy():
    import json

    import torch
    import transformers

    proc = subprocess.run(
        [sys.executable, "-m", "neffbench", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    stack = data["stack"]
    assert stack["kind"] == "other" and stack["summary"].startswith("not a Neuron venv")
    assert stack["versions"]["torch"] == torch.__version__  # the local build tag kept: +cpu, +cu128
    trace_trap = [w for w in stack["warnings"] if "unordered_map::at" in w]
    if int(transformers.__version__.split(".")[0]) < 5 and data["backend"] in ("neuron", "cpu-check"):
        assert len(trace_trap) == 1 and "Remedy:" in trace_trap[0]
        assert f"Warning: {trace_trap[0]}" in data["advice"]
    else:
        assert trace_trap == []


LEGACY = {
    "python": "3.10.12",
    "torch": "2.9.0",
    "numpy": "1.26.4",
    "transformers": "4.51.3",
    "torch_neuronx": "2.9.0.2.15.32035",
    "neuronx_cc": "2.21.33363.0",
    "torchvision": None,
    "pyside6": "6.11.3",
}


def test_a_legacy_neuron_venv_is_told_by_its_torch_neuronx_or_by_its_path():
    from neffbench.toolchain.stack import _kind

    assert _kind(LEGACY, "legacy", "/home/me/venv")[0] == "legacy-neuron"
    kind, summary = _kind({**LEGACY, "torch_neuronx": None}, None, "/opt/aws_neuronx_venv_pytorch_2_8_nxd_inference")
    assert kind == "legacy-neuron" and "/opt/aws_neuronx_venv_pytorch_2_8_nxd_inference" in summary
    assert _kind({**LEGACY, "torch_neuronx": "2.13.3.0"}, "native", "/venv")[0] == "torchneuron"
    assert _kind({**LEGACY, "torch_neuronx": None}, None, "/venv")[0] == "other"


@pytest.mark.parametrize(
    ("changes", "backend", "says"),
    [
        ({}, "neuron", "unordered_map::at"),
        ({"numpy": "2.1.0"}, "torchneuron", "pip install numpy==1.26.4"),
        ({"torch": "2.10.0"}, "torchneuron", "pip install 'torch==2.9.*'"),
        ({"torchvision": "0.25.0"}, "torchneuron", "torchvision==0.24.*"),
    ],
)
def test_each_known_bad_combination_is_one_warning_with_its_remedy(changes, backend, says):
    from neffbench.toolchain.stack import _warnings

    warnings = _warnings({**LEGACY, **changes}, backend)
    assert len(warnings) == 1 and says in warnings[0] and "Remedy:" in warnings[0]


def test_a_good_stack_has_no_warnings():
    from neffbench.toolchain.stack import _warnings

    assert _warnings({**LEGACY, "transformers": "5.2.0", "torchvision": "0.24.1"}, "neuron") == []
    assert _warnings({**LEGACY, "transformers": "4.57.1"}, "torchneuron") == []  # torch.compile: not a jit trace
