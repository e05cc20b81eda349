"""The suite's own shared fixtures do what the tests that use them rely on: a command run in this process says what
the same command says as a child process and leaves nothing behind; a compiled workdir is compiled once and copied."""

from __future__ import annotations

import os
import sys

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
