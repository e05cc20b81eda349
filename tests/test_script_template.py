"""reproduce.py is written from templates: Python files whose placeholders a job's values fill, with no doubled braces."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from neffbench.kernels.script_template import TemplateError, fill

APP = Path(__file__).resolve().parents[1] / "app" / "neffbench"
TEMPLATES = sorted(APP.glob("**/templates/*.py"))


def _template(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_form_of_placeholder_is_filled_where_it_stands(tmp_path):
    template = _template(
        tmp_path,
        '"""Job ${job}."""\n#: ${block}\nARGS = "${args}"  # for ${job}\nTABLE = {"a": 1}\n',
    )
    text = fill(template, job="seed-1", block="import os\nimport sys", args=["--target", "trn2"])
    assert text == (
        '"""Job seed-1."""\nimport os\nimport sys\nARGS = [\'--target\', \'trn2\']  # for seed-1\nTABLE = {"a": 1}\n'
    )


def test_an_empty_block_leaves_its_line_empty(tmp_path):
    assert fill(_template(tmp_path, "a = 1\n#: ${note}\nb = 2\n"), note="") == "a = 1\n\nb = 2\n"


def test_a_value_is_never_read_as_a_template(tmp_path):
    assert fill(_template(tmp_path, "# ${a}\n"), a="${b}") == "# ${b}\n"


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({}, "script.py: no value for job."),
        ({"job": 1, "extra": 2}, "script.py: no placeholder for extra."),
        ({"other": 1}, "script.py: no value for job; no placeholder for other."),
    ],
)
def test_a_template_and_its_values_that_disagree_are_refused_by_name(tmp_path, values, said):
    with pytest.raises(TemplateError) as caught:
        fill(_template(tmp_path, "# ${job}\n"), **values)
    assert str(caught.value) == said


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(APP)))
def test_every_template_is_python_with_placeholders_only_where_python_allows_them(template):
    """ruff checks them (pyproject.toml); this says why it can: each is Python as it is written."""
    ast.parse(template.read_text(encoding="utf-8"), filename=str(template))


def test_no_template_is_a_module_anything_imports():
    assert TEMPLATES and all(not (t.parent / "__init__.py").exists() for t in TEMPLATES)


def test_every_template_ships_in_the_wheel():
    """The wheel takes whole package folders (pyproject.toml) less what git ignores: the templates go with the code."""
    import subprocess

    from neffbench.spec.files import tomllib

    root = APP.parents[1]
    wheel = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"]
    target = wheel["targets"]["wheel"]
    assert not {"exclude", "only-include"} & set(target) and "exclude" not in wheel
    assert all(any(t.relative_to(root).is_relative_to(p) for p in target["packages"]) for t in TEMPLATES)
    if (root / ".git").exists():
        ignored = subprocess.run(
            ["git", "check-ignore", *map(str, TEMPLATES)], cwd=root, capture_output=True, text=True
        )
        assert ignored.stdout == ""
