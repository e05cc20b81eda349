"""The templates write every kernel's reproduce.py under every backend byte for byte as the code before them did."""

from __future__ import annotations

import ast

import pytest

from tests.reproduce_cases import CASES, FIXTURES, script


@pytest.mark.parametrize("case", CASES)
def test_the_script_is_the_one_the_str_format_code_wrote(case):
    assert script(case) == (FIXTURES / f"{case}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
def test_the_script_is_python(case):
    ast.parse(script(case))


def test_every_case_has_its_recorded_script():
    assert sorted(p.stem for p in FIXTURES.glob("*.txt")) == sorted(CASES)
