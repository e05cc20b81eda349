"""An exception in the user's code is named at its innermost frame in the user's own files, whatever file the
factory lives in; the whole traceback is kept (job.log, the probe's report), and the terminal shows no frames
of the workbench's own code."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from neffbench.jobs.terminal_log import TracebackFolder
from neffbench.usercode import errors, tracebacks
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
    # It failed in the forward, and says so (not "during inputs").
    assert "(during the first call of the module's forward)" in proc.stdout and "during inputs" not in proc.stdout
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
        tracebacks.user_frames(text)
        == f'  File "{user}", line 9, in forward\n    return self.fc(x)\nRuntimeError: shapes'
    )


def _traceback_from_elsewhere(user: Path) -> list[str]:
    """A traceback as a job's log written on another host has it: the workbench and libraries under that host's
    folders, Python's own import machinery, and the user's model in a folder of its own named like the workbench."""
    return [
        "Traceback (most recent call last):",
        '  File "/home/u/venv/lib/python3.11/site-packages/neffbench/jobs/backends.py", line 169, in neuron_trace',
        "    return backend.torch_neuronx.trace(module, inputs, **kwargs)",
        '  File "/home/u/neffbench/app/neffbench/workers/compile.py", line 88, in main',
        "    run(job)",
        '  File "<frozen importlib._bootstrap>", line 1360, in _find_and_load',
        f'  File "{user}", line 12, in forward',
        "    return self.proj(x)",
        "           ^^^^^^^^^^^^",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1739, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        "RuntimeError: shapes",
    ]


def test_the_terminal_the_log_view_and_the_probe_agree_on_the_users_frames(tmp_path):
    """One rule says which frames are the user's: the workbench's and packages' are not, wherever the log was
    written; the user's model file is, in a folder named neffbench too, and Python's pseudo-files are shown."""
    from neffbench.gui.compile.traceback_fold import FOLDED
    from neffbench.gui.compile.traceback_fold import TracebackFolder as ViewFolder

    user = tmp_path / "neffbench" / "mymodel.py"
    lines = _traceback_from_elsewhere(user)
    users = [lines[5], f'  File "{user}", line 12, in forward', "    return self.proj(x)", "           ^^^^^^^^^^^^"]
    assert tracebacks.user_frames("\n".join(lines)).splitlines() == [*users, "RuntimeError: shapes"]
    assert tracebacks.without_foreign_frames(lines) == [*users[:3], "RuntimeError: shapes"]
    view, shown = ViewFolder(), []
    for line in lines:
        said = view.feed(line)
        if said is not FOLDED:
            shown += [said, line] if isinstance(said, str) else [line]
    assert shown == [
        *users,
        "⋯ Python traceback: 6 lines through neffbench and library code folded (job.log has them all)",
        "RuntimeError: shapes",
    ]
    terminal: list[str] = []
    fold = TracebackFolder(terminal.append)
    for line in [*lines, "neffbench: failed"]:
        fold(line)
    assert terminal == [
        "neffbench: (a Python traceback of 12 lines, ending in RuntimeError, is in the job's job.log)",
        "neffbench: failed",
    ]


STAGED = """
import torch
from torch import nn


class Fails(nn.Module):
    def __init__(self, where="nowhere"):
        super().__init__()
        self.where = where
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if self.where == "forward":
            raise ValueError("the forward went wrong")
        if self.where == "outputs":
            return None
        return self.fc(x)
"""


@pytest.mark.parametrize(
    ("where", "stage", "during"),
    [
        ("forward", "forward", "the first call of the module's forward"),
        ("outputs", "outputs", "the reading of what the forward returned"),
        ("weights", "weights", "the weights digest"),
    ],
)
def test_a_failure_in_the_build_names_the_step_it_happened_in(tmp_path, monkeypatch, where, stage, during):
    """The build of a module job is several steps: each failure says which (the forward, its outputs, the weights
    digest), where all of them once read "(during inputs)"."""
    from neffbench.procs import Emitter
    from neffbench.spec import loads_toml, save
    from neffbench.workers.compile import failure_reason
    from neffbench.workers.stages import Job

    (tmp_path / "staged.py").write_text(STAGED, encoding="utf-8")
    spec = loads_toml(
        f'name = "s"\nkernel = "module"\n[module]\nentry = "staged.py:Fails"\n[module.kwargs]\nwhere = "{where}"\n'
        '[inputs]\nx = "f32[2,4]"\n',
        base_dir=tmp_path,
    )
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    save(spec, job_dir / "spec.toml")
    if where == "weights":

        def unreadable(module):
            raise RuntimeError("a parameter cannot be read")

        monkeypatch.setattr("neffbench.backends.weights.weights_digest", unreadable)
    job = Job(job_dir, "cpu-check", Emitter())
    with pytest.raises(Exception) as raised:
        job.run()
    assert job.stage == stage
    reason = failure_reason(raised.value, job.stage)
    assert reason.endswith(f"(during {during})") or f" during {during}: " in reason, reason
    assert "inputs" not in reason


ATTENTION = """
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        q = self.proj(x)
        return F.scaled_dot_product_attention(q, q, q, is_causal=q.size(-2) > 1)
"""


@pytest.mark.slow
def test_a_cpu_trace_failure_in_the_users_forward_names_their_line(tmp_path):
    """Eager, ``q.size(-2) > 1`` is a bool; traced, a tensor, which the attention refuses. The failure is in the
    user's forward, and is named there as a forward error is."""
    (tmp_path / "attention.py").write_text(ATTENTION, encoding="utf-8")
    proc = _cli(
        "compile", "attention.py:Attention", "--input", "x:f32[1,4,8]", "--workdir", "wd", "--backend", "cpu-check",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "TypeError at attention.py:14 during tracing: scaled_dot_product_attention(): argument 'is_causal' must be "
        "bool, not Tensor" in proc.stdout
    ), proc.stdout
