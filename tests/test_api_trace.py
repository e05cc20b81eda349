"""``neffbench.trace``: torch_neuronx.trace's call, every call a job; cpu-check here, the fakes for the toolchains."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

import neffbench
from neffbench.api import tracing
from neffbench.api.derive import CallError
from neffbench.procs import process_alive
from tests.fakes import PIDFILE_ENV, PYTHON_DIR, TORCHNEURON_DIR, fake_env, read_pidfile, torchneuron_env

pytestmark = pytest.mark.slow


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.linear(x) * 2, y + 1


def _inputs():
    generator = torch.Generator().manual_seed(0)
    return torch.randn(2, 4, generator=generator), torch.randn(2, 3, generator=generator)


@pytest.fixture
def lines(monkeypatch):
    """What trace says, once-only sentences included (each test starts as a fresh process would)."""
    monkeypatch.setattr(tracing, "_said", set())
    return []


@pytest.fixture
def cpu_only(monkeypatch):
    """No toolchain, whatever the machine has."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def test_trace_without_a_toolchain_returns_the_cpu_traced_module_and_records_a_job(tmp_path, lines, cpu_only):
    module, inputs = Scale().eval(), _inputs()
    traced = neffbench.trace(module, inputs, compiler_args="--lnc=2", compiler_workdir=tmp_path, on_line=lines.append)
    assert isinstance(traced, torch.jit.ScriptModule)
    for got, want in zip(traced(*inputs), module(*inputs)):
        torch.testing.assert_close(got, want)
    said = "\n".join(lines)
    assert said.count("trace runs the cpu-check backend") == 1 and "returns the CPU-traced module" in said
    (job,) = neffbench.jobs(tmp_path)
    assert (job.outcome, job.backend, job.cached) == ("succeeded", "cpu-check", False)
    assert job.numerics["match"] is True
    spec = job.view.spec
    assert spec["compiler"]["lnc"] == 2 and set(spec["inputs"]) == {"x", "y"}
    origin = job.origin
    assert origin["how"] == "neffbench.trace" and origin["derived"]["how"] == "pickled"
    assert origin["derived"]["code"][0]["name"] == Path(__file__).name
    assert [t.name for t in job.interface[0]] == ["input0", "input1"]


def test_a_second_identical_call_is_served_from_the_cache_and_says_so_once(tmp_path, lines, cpu_only):
    module, inputs = Scale().eval(), _inputs()
    neffbench.trace(module, inputs, compiler_workdir=tmp_path, on_line=lines.append)
    again = neffbench.trace(module, inputs, compiler_workdir=tmp_path, on_line=lines.append)
    newest, first = neffbench.jobs(tmp_path)
    assert newest.cached and not first.cached
    assert newest.view.cache["served_from"] == str(first.directory)
    torch.testing.assert_close(again(*inputs)[0], module(*inputs)[0])
    assert "\n".join(lines).count("cpu-check backend") == 1
    other = Scale().eval()  # other weights: another NEFF
    neffbench.trace(other, inputs, compiler_workdir=tmp_path, on_line=lines.append)
    assert not neffbench.jobs(tmp_path)[0].cached


def test_nested_inputs_and_plain_functions_are_traced_and_recorded(tmp_path, lines, cpu_only):
    def scaled_sum(pair, extra):
        return pair[0] * 2 + pair[1], extra["bias"] + 1

    a, b = _inputs()
    example = ((a, a), {"bias": b})
    traced = neffbench.trace(scaled_sum, example, compiler_workdir=tmp_path, on_line=lines.append)
    torch.testing.assert_close(traced(*example)[0], a * 3)
    (job,) = neffbench.jobs(tmp_path)
    assert job.succeeded and set(job.view.spec["inputs"]) == {"input0", "input1", "input2"}
    assert job.origin["derived"]["structure"] == [
        "tuple",
        [["tuple", ["tensor", "tensor"]], ["dict", {"bias": "tensor"}]],
    ]


def test_an_object_that_cannot_be_pickled_is_saved_as_its_cpu_trace(tmp_path, lines, cpu_only):
    module = Scale().eval()
    module.lock = threading.Lock()  # no pickle takes a lock
    neffbench.trace(module, _inputs(), compiler_workdir=tmp_path, on_line=lines.append)
    (job,) = neffbench.jobs(tmp_path)
    assert job.succeeded and job.origin["derived"]["how"] == "torchscript"


def test_arguments_that_cannot_be_traced_are_refused_before_any_job(tmp_path, lines, cpu_only):
    with pytest.raises(CallError, match=r"example_inputs\[1\] is int"):
        neffbench.trace(Scale(), (torch.ones(2, 4), 3), compiler_workdir=tmp_path, on_line=lines.append)
    assert neffbench.jobs(tmp_path) == []


def test_a_failing_check_raises_its_explanation_with_the_job_attached(tmp_path, lines, cpu_only, capsys):
    class WithoutKey(torch.nn.Module):
        def forward(self, x):
            return x * 2, None

    with pytest.raises(neffbench.CompileFailed) as caught:
        neffbench.trace(WithoutKey(), torch.ones(2, 3), compiler_workdir=tmp_path)
    failure = caught.value
    assert isinstance(failure, RuntimeError)
    assert "output[1] is None" in str(failure) and str(failure.job_dir) in str(failure)
    assert failure.job.outcome == "failed" and failure.job.directory.parent == tmp_path.resolve()
    printed = capsys.readouterr().out
    assert "a Python traceback of" in printed and "Traceback (most recent call last)" not in printed  # folded


def _rediscover_dynamo_backends() -> None:
    """Dynamo reads the ``torch_dynamo_backends`` entry points once a process, the first time a backend name is
    looked up: a test earlier in this worker (``torch.compile(backend="eager")``) may have done so before the fake
    TorchNeuron's distribution was on sys.path, which no real process sees happen. Let it read them again."""
    registry = sys.modules.get("torch._dynamo.backends.registry")
    for name in ("_lazy_import", "_discover_entrypoint_backends"):
        cached = getattr(registry, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


@pytest.fixture
def toolchain(monkeypatch):
    """``toolchain(env, python_dir)`` puts a fake toolchain in place. This process's own torch_neuronx (what trace
    returns imports it) is forgotten before and after: the two fakes are one package name."""

    def forget() -> None:
        for name in [n for n in sys.modules if n.split(".")[0] == "torch_neuronx"]:
            del sys.modules[name]

    def use(env: dict, python_dir: Path) -> None:
        forget()
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.syspath_prepend(str(python_dir))
        _rediscover_dynamo_backends()

    yield use
    forget()


def test_with_the_legacy_toolchain_it_returns_the_scriptmodule_holding_the_neff(tmp_path, lines, toolchain):
    toolchain(fake_env(), PYTHON_DIR)
    module, inputs = Scale().eval(), _inputs()
    traced = neffbench.trace(
        module, inputs, compiler_args=["--target", "trn2"], compiler_workdir=tmp_path, on_line=lines.append
    )
    assert isinstance(traced, torch.jit.ScriptModule)
    torch.testing.assert_close(traced(*inputs)[1], module(*inputs)[1])
    (job,) = neffbench.jobs(tmp_path)
    assert job.backend == "neuron" and len(job.neffs) == 1 and job.neffs[0].is_file()
    assert "--target trn2" in " ".join(job.view.actual_command)
    assert "cpu-check" not in "\n".join(lines)


def test_a_compiler_failure_raises_one_exception_explaining_the_first_error(tmp_path, lines, toolchain):
    toolchain(fake_env("compile-error"), PYTHON_DIR)
    with pytest.raises(neffbench.CompileFailed) as caught:
        neffbench.trace(Scale().eval(), _inputs(), compiler_workdir=tmp_path, on_line=lines.append)
    message = str(caught.value)
    assert "NLA001" in message and "What to do:" in message and str(caught.value.job_dir) in message
    assert caught.value.job.explain().outcome == "failed"


def test_with_torchneuron_it_says_how_the_call_maps_to_torch_compile(tmp_path, lines, toolchain):
    toolchain(torchneuron_env(), TORCHNEURON_DIR)
    module, inputs = Scale().eval(), _inputs()
    compiled = neffbench.trace(module, inputs, compiler_workdir=tmp_path, on_line=lines.append)
    said = "\n".join(lines)
    assert 'torch.compile(module.to("neuron"), backend="neuron", fullgraph=True, dynamic=False' in said
    assert compiled._orig_mod is module  # what torch.compile returns
    (job,) = neffbench.jobs(tmp_path)
    assert job.backend == "torchneuron" and job.succeeded and job.neffs


def test_ctrl_c_cancels_the_compile_records_it_and_leaves_nothing_running(tmp_path, lines, toolchain):
    pidfile = tmp_path / "pids"
    toolchain(fake_env("slow", **{PIDFILE_ENV: str(pidfile)}), PYTHON_DIR)

    def interrupt() -> None:
        deadline = time.monotonic() + 120
        while not pidfile.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        neffbench.trace(Scale().eval(), _inputs(), compiler_workdir=tmp_path / "wd", on_line=lines.append)
    (job,) = neffbench.jobs(tmp_path / "wd")
    assert job.outcome == "cancelled"
    pids = [*read_pidfile(pidfile).values(), job.view.raw["worker_pid"]]
    deadline = time.monotonic() + 10  # the group is killed and reaped before trace returns; init reaps the rest
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if process_alive(pid)]


def test_a_warm_trace_resolves_only_the_modules_loaded_since_the_last(tmp_path, monkeypatch):
    """Finding your own modules (saved by value) resolved every loaded module's path, most of a warm trace's time;
    a module of yours imported since is still found."""
    from neffbench.api import derive
    from neffbench.usercode import origin

    derive._user_modules()
    derive._user_modules()  # what the first loaded on its way is known too
    resolved = []
    real = origin.module_file
    monkeypatch.setattr(origin, "module_file", lambda module: resolved.append(module.__name__) or real(module))
    (tmp_path / "mine_since.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mine_since", raising=False)
    __import__("mine_since")
    found = [m.__name__ for m in derive._user_modules()]
    assert resolved == ["mine_since"] and "mine_since" in found
    monkeypatch.delitem(sys.modules, "mine_since")


def test_a_second_trace_in_the_same_process_names_the_same_file(tmp_path, lines, cpu_only):
    """The first trace saves the class by value and loads it back; the second still finds where it is defined."""
    for folder in ("a", "b"):
        neffbench.trace(Scale().eval(), _inputs(), compiler_workdir=tmp_path / folder, on_line=lines.append)
        (job,) = neffbench.jobs(tmp_path / folder)
        assert [c["name"] for c in job.origin["derived"]["code"]] == [Path(__file__).name]
