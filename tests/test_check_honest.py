"""What ``check`` says it checked, it checked; what cannot work is refused before any job starts, in words."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from tests.cli import neffbench
from tests.fakes import fake_env

POSITIONS = """
import torch
from torch import nn


class Tiny(nn.Module):
    \"\"\"A learned position table of 16 rows: a longer sequence cannot run.\"\"\"

    def __init__(self, dim: int = 8, max_positions: int = 16):
        super().__init__()
        self.positions = nn.Embedding(max_positions, dim)

    def forward(self, x):
        return x + self.positions(torch.arange(x.shape[1]))
"""
ANY_KWARGS = """
from torch import nn


class Settings:
    \"\"\"Takes any keyword, as Hugging Face configs do, and keeps it.\"\"\"

    def __init__(self, width: int = 4, **kwargs):
        self.width = width
        self.depth = 1
        for key, value in kwargs.items():
            setattr(self, key, value)


def make(settings):
    return nn.Linear(settings.width, settings.width)
"""
COMPLEX = """
import torch
from torch import nn


class ComplexRotary(nn.Module):
    def __init__(self, dim: int = 8, positions: int = 16):
        super().__init__()
        angles = torch.outer(torch.arange(positions).float(), torch.arange(dim // 2).float())
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x):
        assert x.ndim == 2  # reading an attribute of a tensor is not an operation on it
        pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(pairs * self.freqs[: x.shape[0]]).flatten(-2)
"""
SLOW = """
import threading

from torch import nn


def make():
    threading.Event().wait(600)  # a build that never finishes within the check's timeout
    return nn.Identity()
"""


_cli = neffbench


@pytest.mark.slow
def test_check_runs_every_bucket_and_never_says_ok_for_one_it_did_not(tmp_path, neffbench_in_process):
    (tmp_path / "tiny.py").write_text(POSITIONS)
    ok = neffbench_in_process(
        "check", "tiny.py:Tiny", "--input", "x:f32[1,{seq},8]", "--bucket", "seq=4,8", cwd=tmp_path
    )
    assert ok.returncode == 0, ok.stderr
    assert "pre-flight checked 2 of 2 buckets: seq=4, seq=8" in ok.stdout
    bad = neffbench_in_process(
        "check", "tiny.py:Tiny", "--input", "x:f32[1,{seq},8]", "--bucket", "seq=4,32", cwd=tmp_path
    )
    assert bad.returncode == 2
    assert (
        "pre-flight [seq=32]" in bad.stderr
        and "index out of range" in bad.stderr.lower()
        or "out of range" in bad.stderr
    ), bad.stderr
    assert "[seq=4]" not in bad.stderr.replace("pre-flight [seq=4]: warning", "")  # the good bucket has no error
    assert ": OK" not in bad.stdout


@pytest.mark.slow
def test_misspelt_keys_of_a_nested_object_are_refused_everywhere(tmp_path, neffbench_in_process):
    (tmp_path / "m.py").write_text(ANY_KWARGS)
    spec = tmp_path / "m.toml"
    spec.write_text(
        textwrap.dedent("""
        kernel = "module"
        name = "kw"
        workdir = "wd"

        [module]
        entry = "m.py:make"

        [module.kwargs.settings]
        entry = "m.py:Settings"
        kwargs = { width = 4, dpeth = 3 }

        [inputs]
        input = "f32[2,4]"
        """)
    )
    check = neffbench_in_process("check", str(spec), cwd=tmp_path)
    assert check.returncode == 2
    assert "module.kwargs.settings.kwargs: 'dpeth' is not something Settings knows" in check.stderr
    assert "Did you mean 'depth'?" in check.stderr
    compile_ = neffbench_in_process("compile", str(spec), "--backend", "cpu-check", cwd=tmp_path)
    assert compile_.returncode == 2 and "nothing was started" in compile_.stderr, compile_.stderr
    assert not list((tmp_path / "wd").glob("*/job.json"))  # no failed job per bucket: nothing at all
    sweep = neffbench_in_process(
        "sweep", str(spec), "--over", "module.kwargs.settings.kwargs.width=4,8", "--backend", "cpu-check", cwd=tmp_path
    )
    assert sweep.returncode == 2, sweep.stdout + sweep.stderr
    assert "'dpeth' is not something Settings knows" in sweep.stdout + sweep.stderr
    assert not list((tmp_path / "wd").glob("*/job.json"))


def test_what_a_class_knows_includes_its_default_attributes_and_aliases():
    from neffbench.kernels.module.kwargs_check import unknown_keys

    class Config:
        attribute_map = {"hidden_size": "n_embd"}

        def __init__(self, n_embd: int = 4, **kwargs):
            self.n_embd = n_embd
            self._attn_implementation = kwargs.pop("attn_implementation", None)
            self.__dict__.update(kwargs)

    assert unknown_keys(Config, ["n_embd", "hidden_size", "attn_implementation"]) == []
    (problem,) = unknown_keys(Config, ["n_emdb"])
    assert "Did you mean 'n_embd'?" in problem

    def plain(width: int = 1):
        return width

    assert "has no parameter 'widht'" in unknown_keys(plain, ["widht"])[0]

    def open_ended(**kwargs):
        return kwargs

    assert unknown_keys(open_ended, ["anything"]) == []  # nothing certain to compare against


@pytest.mark.slow
def test_compile_refuses_an_entry_that_cannot_work_before_starting_any_job(tmp_path, neffbench_in_process):
    (tmp_path / "tiny.py").write_text(POSITIONS)
    wrong_name = neffbench_in_process(
        "compile",
        "tiny.py:Tiny",
        "--input",
        "y:f32[1,4,8]",
        "--bucket",
        "seq=4,8",
        "--workdir",
        "wd",
        "--backend",
        "cpu-check",
        cwd=tmp_path,
    )
    assert wrong_name.returncode == 2
    assert "input 'y' names no parameter of Tiny.forward" in wrong_name.stderr
    missing = neffbench_in_process(
        "compile", "tiny.py:Tny", "--input", "x:f32[1,4,8]", "--workdir", "wd", "--backend", "cpu-check", cwd=tmp_path
    )
    assert missing.returncode == 2 and "Did you mean 'Tiny'?" in missing.stderr, missing.stderr
    assert not (tmp_path / "wd").exists() or not list((tmp_path / "wd").glob("*/job.json"))


def test_a_shape_too_large_for_this_machine_is_refused_in_words(tmp_path, neffbench_in_process):
    from neffbench.machine_memory import total_bytes

    (tmp_path / "tiny.py").write_text(POSITIONS)
    # 10^6 x 10^6 float32: 3.6 TiB, more than any machine this runs on.
    proc = neffbench_in_process(
        "check", "tiny.py:Tiny", "--input", "x:f32[1000000,1000000]", "--no-probe", cwd=tmp_path
    )
    assert proc.returncode == 2
    have = f"{total_bytes() / 2**30:.1f} GiB"
    assert (
        f"Input 'x' needs 3725.3 GiB at the largest bucket (no bucket axes); this machine has {have}." in proc.stderr
    ), proc.stderr


def test_the_rope_kernels_refuse_inputs_larger_than_memory():
    from neffbench.kernels import token
    from neffbench.spec import Problem

    problems: list[Problem] = []
    token.warn_if_large(10**13, "float32", problems)
    assert problems[0].severity == "error" and "this machine has" in problems[0].message


@pytest.mark.slow
def test_complex_numbers_inside_the_graph_are_named_with_the_line_and_what_the_toolchain_does(
    tmp_path, neffbench_in_process
):
    (tmp_path / "rot.py").write_text(COMPLEX)
    cpu = neffbench_in_process(
        "check", "rot.py:ComplexRotary", "--input", "x:f32[4,8]", "--backend", "cpu-check", cwd=tmp_path
    )
    assert cpu.returncode == 0, cpu.stderr
    assert "torch.view_as_complex at rot.py:14" in cpu.stderr and "NCC_EVRF004" in cpu.stderr
    assert "ndim" not in cpu.stderr
    assert "cos and sin tables" in cpu.stderr
    # The fake toolchain's neuronx-cc is 2.21: before complex64 support, so the compile is refused before it runs.
    env = fake_env("success")
    neuron = _cli(
        "compile",
        "rot.py:ComplexRotary",
        "--input",
        "x:f32[4,8]",
        "--backend",
        "neuron",
        "--target",
        "trn2",
        "--workdir",
        "wd",
        cwd=tmp_path,
        env=env,
    )
    assert neuron.returncode == 1, neuron.stdout[-2000:]
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "wd").glob("*/job.json")]
    assert "pre-flight" in record["reason"] and "NCC_EVRF004" in record["reason"]
    assert "rot.py:14" in record["reason"]


def test_complex_advice_follows_the_installed_toolchain():
    from neffbench.backends.complex_ops import Finding, advice
    from neffbench.backends.legacy import LegacyTrace
    from neffbench.backends.torchneuron import TorchNeuron

    found = [Finding("torch.view_as_complex", "m.py:3", "complex"), Finding("torch.fft.fft", "m.py:4", None)]
    (old,) = advice(found, LegacyTrace, "2.21.33363.0", "2.9.1")
    assert old[0] == "error" and "NCC_EVRF004" in old[1]
    (new,) = advice(found, LegacyTrace, "2.27.5334.0", "2.9.1")
    assert new[0] == "warning" and "torch.fft.fft at m.py:4" in new[1] and "not among them" in new[1]
    assert "view_as_complex" not in new[1]  # it is on the documented list
    (native,) = advice(found, TorchNeuron, None, "2.13.0")
    assert native[0] == "warning" and "TORCH_NEURONX_COMPLEX_DECOMPOSE" in native[1]
    assert advice([], LegacyTrace, "2.21", "2.9") == []


def test_check_of_a_python_file_without_a_name_says_to_add_one(tmp_path, neffbench_in_process):
    (tmp_path / "tiny.py").write_text(POSITIONS)
    proc = neffbench_in_process("check", "tiny.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "tiny.py is Python, not a spec: add :NAME to say what in it to compile, as in tiny.py:Tiny" in proc.stderr
    assert "TOML" not in proc.stderr


@pytest.mark.slow
def test_check_honours_its_timeout_and_says_what_it_did_not_check(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    proc = _cli("check", "slow.py:make", "--input", "input:f32[1,4]", "--timeout", "3", cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "did not answer within 3 s" in proc.stderr and "not checked:" in proc.stderr


def test_a_sweep_whose_points_resolve_to_one_spec_says_so_before_running(tmp_path, neffbench_in_process):
    from neffbench.presets import load_preset
    from neffbench.sweeps import plan

    seed = load_preset("seed")
    result = plan(seed, ["compiler.optlevel=1,2"], backend="cpu-check")
    assert result.duplicates == [([0, 1], ["compiler.optlevel"])]
    assert plan(seed, ["compiler.optlevel=1,2"], backend="neuron").duplicates == []
    proc = neffbench_in_process(
        "sweep",
        "seed",
        "--over",
        "compiler.optlevel=1,2",
        "--backend",
        "cpu-check",
        "--dry-run",
        "--workdir",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert "would compile the same thing (compiler.optlevel changes nothing" in proc.stdout
    strict = neffbench_in_process(
        "sweep",
        "seed",
        "--over",
        "compiler.optlevel=1,2",
        "--backend",
        "cpu-check",
        "--strict",
        "--workdir",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert strict.returncode == 2 and "nothing was started" in strict.stderr


def test_a_key_the_class_turns_into_something_else_is_honoured_and_a_stored_one_only_warned():
    from neffbench.kernels.module.kwargs_check import check

    class Legacy:
        """Like a Hugging Face config taking an old name for a field (rope_theta, rotary_pct)."""

        def __init__(self, width: int = 4, **kwargs):
            self.width = kwargs.pop("old_width", width)
            self.depth = 1
            self.__dict__.update(kwargs)

    class Node:
        """minGPT's CfgNode, argparse.Namespace: keeps what it is given, and the code reads it later."""

        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    assert check(Legacy, {"old_width": 8}).errors == []
    found = check(Legacy, {"dpeth": 2})
    assert found.errors and "Did you mean 'depth'?" in found.errors[0]
    kept = check(Node, {"n_layer": 2, "vocab_size": 10})
    assert kept.errors == [] and len(kept.warnings) == 2


def test_tables_are_set_by_their_own_options_not_by_a_text_option(tmp_path, neffbench_in_process):
    out = neffbench_in_process("check", "--help", cwd=tmp_path).stdout
    assert "--kwarg NAME=VALUE" in out and "--kwargs " not in out and "--constants " not in out
    bad = neffbench_in_process("check", "seed", "--constants", "use_cache=false", cwd=tmp_path)
    assert bad.returncode == 2 and "unrecognized arguments: --constants" in bad.stderr  # argparse, no traceback


PYTHON_OP = """
import torch
from torch import nn


class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class Net(nn.Module):
    def forward(self, x):
        return Doubled.apply(x) + 1
"""


@pytest.mark.slow
def test_a_python_function_in_the_graph_is_refused_by_pre_flight_and_leaves_no_model_pt(tmp_path, neffbench_in_process):
    (tmp_path / "pyop.py").write_text(PYTHON_OP)
    check = neffbench_in_process("check", "pyop.py:Net", "--input", "x:f32[2]", cwd=tmp_path)
    assert check.returncode == 2
    assert "calls the Python function Doubled (a torch.autograd.Function, called at" in check.stderr
    assert "called at pyop.py:18)" in check.stderr
    compile_ = neffbench_in_process(
        "compile", "pyop.py:Net", "--input", "x:f32[2]", "--workdir", "wd", "--backend", "cpu-check", cwd=tmp_path
    )
    assert compile_.returncode == 1
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    assert not (job / "model.pt").exists() and json.loads((job / "job.json").read_text())["model_pt"] is None
    explained = neffbench_in_process("explain", str(job), cwd=tmp_path).stdout
    # The job explained by its record: the cause, not "no compiler outcome in its log".
    assert "Failed: pre-flight: the traced graph calls the Python function Doubled" in explained.splitlines()[0]


def test_a_failed_save_of_model_pt_leaves_nothing(tmp_path):
    import torch

    from neffbench.procs import Emitter
    from neffbench.workers.stages import Job

    namespace: dict = {}
    exec(compile(PYTHON_OP, "<pyop>", "exec"), namespace)  # noqa: S102 - the test's own module
    traced = torch.jit.trace(namespace["Net"](), (torch.ones(2),))
    job = Job(tmp_path, "cpu-check", Emitter())
    with pytest.raises(RuntimeError, match="Could not export Python function"):
        job._save_model_pt(traced)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_run_of_a_failed_job_says_the_job_failed(tmp_path):
    (tmp_path / "tiny.py").write_text(POSITIONS)
    env = fake_env("compile-error", runtime=True)
    proc = _cli(
        "compile",
        "tiny.py:Tiny",
        "--input",
        "x:f32[1,4,8]",
        "--workdir",
        "wd",
        "--backend",
        "neuron",
        "--target",
        "trn2",
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 1
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    run = _cli("run", str(job), "--runtime", "nrtpy", cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert "there is no NEFF to load (the job ended failed before making one: neuronx-cc failed with 1" in run.stdout
    assert "warning: the job that made this failed:" in run.stdout


@pytest.mark.slow
def test_a_module_that_changes_itself_when_called_is_said_so(tmp_path, neffbench_in_process):
    (tmp_path / "counter.py").write_text(
        textwrap.dedent("""
        import torch
        from torch import nn


        class Counter(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("calls", torch.zeros(1))

            def forward(self, x):
                self.calls += 1
                return x + self.calls
        """)
    )
    proc = neffbench_in_process(
        "compile",
        "counter.py:Counter",
        "--input",
        "x:f32[2]",
        "--workdir",
        "wd",
        "--backend",
        "cpu-check",
        cwd=tmp_path,
    )
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "wd").glob("*/job.json")]
    assert proc.returncode != 0 and record["outcome"] == "failed", proc.stdout[-2000:]
    assert record["reason"].startswith("pre-flight: the forward writes into the buffer 'calls' at counter.py:12")
    kept = neffbench_in_process(
        "compile",
        "counter.py:Counter",
        "--input",
        "x:f32[2]",
        "--state",
        "calls",
        "--workdir",
        "wd2",
        "--backend",
        "cpu-check",
        cwd=tmp_path,
    )
    assert kept.returncode == 0, kept.stdout[-2000:]
    assert "match against the eager reference at each of 3 calls, the state carried" in kept.stdout


@pytest.mark.slow
def test_the_hashes_check_prints_are_the_jobs_names(tmp_path, neffbench_in_process):
    (tmp_path / "tiny.py").write_text(POSITIONS)
    args = ("tiny.py:Tiny", "--input", "x:f32[1,{seq},8]", "--bucket", "seq=4,8")
    check = neffbench_in_process("check", *args, cwd=tmp_path)
    line = next(ln for ln in check.stdout.splitlines() if "each bucket's job" in ln)
    printed = set(re.findall(r"\b[0-9a-f]{8}\b", line))
    compile_ = neffbench_in_process("compile", *args, "--workdir", "wd", "--backend", "cpu-check", cwd=tmp_path)
    assert compile_.returncode == 0
    named = {p.name.rsplit("-", 1)[-1] for p in (tmp_path / "wd").iterdir() if p.is_dir()}
    assert printed == named
