"""An exception in the user's code is named at its innermost frame in the user's own files, whatever file the
factory lives in; the whole traceback is kept (job.log, the probe's report), and the terminal shows no frames
of the workbench's own code."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from neffbench.cli.terminal_log import TracebackFolder
from neffbench.usercode import errors
from tests.cli import neffbench
from tests.fakes import fake_env


def _project(root: Path) -> None:
    """The factory in one file, the layer that fails in another, both the user's."""
    (root / "layers.py").write_text(
        textwrap.dedent("""
        import torch
        from torch import nn


        class Checked(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.dim = dim
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                assert x.shape[-1] == self.dim
                return self.fc(x)
        """)
    )
    (root / "factory.py").write_text(
        textwrap.dedent("""
        from layers import Checked


        def make(dim: int = 8):
            return Checked(dim)
        """)
    )


_cli = neffbench


@pytest.mark.slow
def test_a_failed_assertion_names_its_line_in_the_file_that_raised_it(tmp_path, neffbench_in_process):
    _project(tmp_path)
    proc = neffbench_in_process("check", "factory.py:make", "--input", "x:f32[2,4]", cwd=tmp_path)
    assert proc.returncode == 2
    assert (
        "raised AssertionError at layers.py:13: the assertion failed: assert x.shape[-1] == self.dim" in proc.stderr
    ), proc.stderr
    assert 'File "' + str(tmp_path / "layers.py") in proc.stderr  # the user's frame, shown with its source
    assert "neffbench/kernels" not in proc.stderr and "site-packages" not in proc.stderr


@pytest.mark.slow
def test_a_job_keeps_the_whole_traceback_and_the_terminal_gets_the_sentence(tmp_path):
    """The forward fails only in the worker (the bucket's shape), so a job starts and fails."""
    _project(tmp_path)
    proc = _cli(
        "compile",
        "factory.py:make",
        "--input",
        "x:f32[2,{d}]",
        "--bucket",
        "d=8,4",
        "--workdir",
        "wd",
        "--backend",
        "cpu-check",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "AssertionError at layers.py:13: the assertion failed" in proc.stdout
    assert 'compile.py", line' not in proc.stdout and "Traceback (most recent call last)" not in proc.stdout
    assert "a Python traceback of" in proc.stdout and "is in the job's job.log" in proc.stdout
    (failed,) = [p.parent for p in (tmp_path / "wd").glob("*/job.log") if "Traceback" in p.read_text()]
    log = (failed / "job.log").read_text()
    assert "Traceback (most recent call last)" in log and 'layers.py", line 13' in log and "workers/stages.py" in log


@pytest.mark.slow
def test_a_compiler_failure_prints_no_traceback_of_the_workbench(tmp_path):
    _project(tmp_path)
    proc = _cli(
        "compile",
        "factory.py:make",
        "--input",
        "x:f32[2,8]",
        "--workdir",
        "wd",
        "--backend",
        "neuron",
        "--target",
        "trn2",
        cwd=tmp_path,
        env=fake_env("compile-error"),
    )
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" not in proc.stdout
    assert 'File "' not in proc.stdout, proc.stdout
    assert "[NLA001]" in proc.stdout and "neuronx-cc failed with 1" in proc.stdout


def test_the_innermost_user_frame_is_named_not_the_entry_file(tmp_path):
    (tmp_path / "inner.py").write_text("def boom():\n    raise ValueError('width must be even')\n")
    (tmp_path / "outer.py").write_text("import inner\n\n\ndef call():\n    inner.boom()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import outer  # type: ignore[import-not-found]

        try:
            outer.call()
        except ValueError as exc:
            assert errors.describe(exc) == "ValueError at inner.py:2: width must be even"
            assert "inner.py" in errors.format_traceback(exc)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("outer", None)
        sys.modules.pop("inner", None)


def test_a_traceback_folds_to_one_line_per_job():
    lines: list[str] = []
    fold = TracebackFolder(lines.append)
    for line in [
        "neffbench: tracing",
        "Traceback (most recent call last):",
        '  File "/x/worker.py", line 3, in run',
        "    job.run()",
        "FileNotFoundError: no such file",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/x/a.py", line 1, in f',
        "KernelError: it failed",
        "[n=1] Traceback (most recent call last):",
        '[n=1]   File "/x/b.py", line 2',
        "neffbench: failed: it",
    ]:
        fold(line)
    fold.close()
    assert lines == [
        "neffbench: tracing",
        "neffbench: (a Python traceback of 10 lines, ending in KernelError, is in the job's job.log)",
        "neffbench: failed: it",
        "[n=1] neffbench: (a Python traceback of 2 lines is in the job's job.log)",
    ]


def test_frames_of_the_workbench_and_libraries_are_left_out_of_what_a_terminal_shows(tmp_path):
    user = tmp_path / "model.py"
    text = (
        f'Traceback (most recent call last):\n  File "{errors.__file__}", line 5, in x\n    y()\n'
        f'  File "{user}", line 9, in forward\n    return self.fc(x)\nRuntimeError: shapes\n'
    )
    assert (
        errors.user_frames(text) == f'  File "{user}", line 9, in forward\n    return self.fc(x)\nRuntimeError: shapes'
    )
