"""The suite's own shared fixtures do what the tests that use them rely on: a command run in this process says what
the same command says as a child process and leaves nothing behind; a compiled workdir is compiled once and copied."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.cli import REPO, neffbench


@pytest.mark.parametrize(
    "argv",
    [
        ["kernel", "list"],
        ["check", "seed", "--rotary-dim", "63"],
        ["preset", "show", "seed"],
        ["check"],  # argparse's own error: exit 2, usage on stderr
        ["--version"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_a_command_in_this_process_says_what_it_says_as_a_child(neffbench_in_process, argv):
    child = neffbench(*argv)
    here = neffbench_in_process(*argv)
    assert (here.returncode, here.stdout, here.stderr) == (child.returncode, child.stdout, child.stderr)


def test_a_command_in_this_process_leaves_its_directory_environment_and_stdin_as_they_were(
    neffbench_in_process, tmp_path
):
    cwd, stdin, environ = os.getcwd(), sys.stdin, dict(os.environ)
    done = neffbench_in_process(
        "explain", "-", cwd=tmp_path, env={"NEFFBENCH_SUITE_PROBE": "1"}, stdin="Compiler status PASS\n"
    )
    assert done.returncode == 0 and "PASS" in done.stdout
    assert (os.getcwd(), sys.stdin, dict(os.environ)) == (cwd, stdin, environ)
    assert neffbench_in_process("kernel", "list").args == ["neffbench", "kernel", "list"]
    assert os.getcwd() == cwd and REPO.is_dir()


@pytest.mark.slow
def test_a_compiled_workdir_is_compiled_once_and_each_copy_is_a_test_s_own(compiled, tmp_path):
    original = compiled.original("seed", "--backend", "cpu-check")
    assert compiled.original("seed", "--backend", "cpu-check") == original  # not compiled again
    [first] = compiled.jobs(tmp_path / "a", "seed", "--backend", "cpu-check")
    [second] = compiled.jobs(tmp_path / "b", "seed", "--backend", "cpu-check")
    assert first.name == second.name and first != second and first.parent.parent == tmp_path / "a"
    (first / "job.json").write_text("changed")
    assert (second / "job.json").read_text() != "changed"
    assert (original / first.name / "job.json").read_text() != "changed"


TINY = """
from torch import nn


def make():
    return nn.Linear(4, 2)
"""


@pytest.mark.slow
def test_a_users_project_is_compiled_once_and_each_copy_is_a_test_s_own(compiled, tmp_path):
    args = ("tiny.py:make", "--input", "input:f32[1,4]", "--workdir", "wd", "--backend", "cpu-check")
    first = compiled.project(tmp_path / "a", {"tiny.py": TINY}, *args)
    second = compiled.project(tmp_path / "b", {"tiny.py": TINY}, *args)
    assert (first, second) == (tmp_path / "a", tmp_path / "b")
    [job_a] = [p.parent for p in first.glob("wd/*/job.json")]
    [job_b] = [p.parent for p in second.glob("wd/*/job.json")]
    assert job_a.name == job_b.name  # one compile, not two
    assert (first / "tiny.py").read_text() == TINY and not (first / "__pycache__").exists()
    (job_a / "job.json").write_text("changed")
    assert (job_b / "job.json").read_text() != "changed"
    # The job names the files where they were compiled, which no test changes.
    entry = json.loads((job_b / "job.json").read_text())["kernel_info"]["entry"]
    assert Path(entry.rpartition(":")[0]).read_text() == TINY and not Path(entry).is_relative_to(tmp_path)
    other = compiled.project(tmp_path / "c", {"tiny.py": TINY.replace("2)", "3)")}, *args)
    [job_c] = [p.parent for p in other.glob("wd/*/job.json")]
    assert job_c.name != job_a.name  # another project, another compile


def test_a_command_given_an_environment_runs_in_a_child_and_one_without_in_this_process(neffbench_unless_env):
    here = neffbench_unless_env("--version")
    child = neffbench_unless_env("--version", env={"NEFFBENCH_SUITE_PROBE": "1"})
    assert here.args == ["neffbench", "--version"] and child.args[1:] == ["-m", "neffbench", "--version"]
    assert (here.returncode, here.stdout) == (child.returncode, child.stdout)
