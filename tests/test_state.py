"""What tracing silently drops, caught before the compile; and module state (a KV cache) kept and carried.

The modules are tests/data/modules/state.py (and problems.py's branch on a value). Pre-flight runs the probe's
check in this process; compiles run real workers, with the cpu-check backend and with the fake legacy toolchain
and fake TorchNeuron, which keep state as the docs say (tests/fakes/).
"""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from neffbench.jobs import CompileJob
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.runs import arrays
from neffbench.runs.neff_run import NeffRun
from neffbench.runs.subject import resolve
from neffbench.spec import to_dict
from neffbench.workers.probe import check
from tests.fakes import fake_env, runtime_controls, torchneuron_env

DATA = Path(__file__).resolve().parent / "data" / "modules"
STATE = DATA / "state.py"
CACHES = tuple(f"layers.{i}.attention.kv_cache.{k}" for i in range(2) for k in ("k_cache", "v_cache"))
GPT_INPUTS = {"x": "f32[1,{tokens},16]", "input_pos": "i64[{tokens}] arange"}


def _spec(entry: str, inputs: dict[str, str], buckets: dict | None = None, **module) -> ModuleCompileSpec:
    return ModuleCompileSpec(
        name=entry.rpartition(":")[2].lower(),
        module=ModuleSection(entry=entry, **module),
        inputs=inputs,
        buckets=buckets or {},
    )


def _gpt(tokens: tuple[int, ...] = (4,), state: tuple[str, ...] = CACHES) -> ModuleCompileSpec:
    return _spec(f"{STATE}:StaticCacheGPT", GPT_INPUTS, {"tokens": tokens}, state=state)


def _problems(spec: ModuleCompileSpec, severity: str) -> list[str]:
    report = check({"spec": to_dict(spec)})
    return [p["message"] for p in report.get("problems", []) if p["severity"] == severity]


# ---- pre-flight: found before the compile, with the user's file:line ----


def test_a_kv_cache_written_in_forward_is_an_error_naming_each_buffer_and_line():
    (error,) = _problems(_gpt(state=()), "error")
    assert error.startswith("the forward writes into 4 buffers of the module (")
    assert (
        "layers.0.attention.kv_cache.k_cache, layers.1.attention.kv_cache.k_cache at state.py:18 (Tensor.__setitem__)"
        in error
    )
    assert "layers.0.attention.kv_cache.v_cache, layers.1.attention.kv_cache.v_cache at state.py:19" in error
    assert "a traced NEFF keeps no state between calls, so on Neuron each is a constant" in error
    assert f"state = [{', '.join(f'{chr(34)}{n}{chr(34)}' for n in CACHES)}] under [module]" in error


def test_a_write_of_the_value_already_there_is_found_too():
    # The counter adds one to what it holds: its digest would change, but so would a write of equal values,
    # which the version counter sees where a digest cannot.
    (error,) = _problems(_spec(f"{STATE}:Counter", {"x": "f32[4]"}), "error")
    assert error.startswith("the forward writes into the buffer 'calls' at state.py:116 (Tensor.add_): ")
    assert "on Neuron this buffer is a constant" in error


def test_declared_state_passes_and_is_lifted_into_the_interface():
    report = check({"spec": to_dict(_gpt())})
    assert report["ok"], report["problems"]
    assert report["interface"]["inputs"][2] == "input2 <- state:layers.0.attention.kv_cache.k_cache"
    assert report["interface"]["outputs"][4] == "output4 <- state:layers.1.attention.kv_cache.v_cache"


def test_state_naming_no_buffer_is_refused_with_the_buffers_there_are():
    report = check({"spec": to_dict(_gpt(state=("layers.0.attention.kv_cache.kcache",)))})
    assert not report["ok"]
    assert (
        "module.state: 'layers.0.attention.kv_cache.kcache' is not a parameter or buffer of StaticCacheGPT"
        in (report["problems"][0]["message"])
    )
    assert "layers.0.attention.kv_cache.k_cache" in report["problems"][0]["message"]


def test_an_input_written_in_place_is_named_and_the_saved_inputs_are_the_ones_before():
    (warning,) = _problems(_spec(f"{STATE}:ScalesInput", {"x": "f32[4]"}), "warning")
    assert warning.startswith("the forward writes into its input 'x' at state.py:75 (Tensor.mul_): a NEFF does not ")


@pytest.mark.parametrize(
    ("entry", "inputs", "draw"),
    [
        ("Noisy", {"x": "f32[4]"}, "torch.randn_like at state.py:83"),
        ("make_dropout", {"x": "f32[16]"}, "F.dropout at state.py:90"),
    ],
)
def test_a_module_whose_answer_is_not_a_function_of_its_inputs_says_so_and_where(entry, inputs, draw):
    (error,) = _problems(_spec(f"{STATE}:{entry}", inputs), "error")
    assert error.startswith("the module gives a different answer on every call: two eager calls with the same ")
    assert f"it draws random numbers: {draw}" in error


def test_a_parameter_never_initialised_is_named_and_every_build_is_the_same():
    from neffbench.backends.weights import weights_digest
    from neffbench.kernels.module.build import build

    spec = _spec(f"{STATE}:Unset", {"x": "f32[4,4]"})
    (warning,) = _problems(spec, "warning")
    assert warning.startswith("the parameter 'table' (allocated at state.py:101) is never initialised: ")
    assert weights_digest(build(spec).module) == weights_digest(build(spec).module)


_MARK_IN_A_FRESH_PROCESS = """
import sys, torch
from neffbench.usercode.effects import marking_uninitialised
with marking_uninitialised():
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.isnan(torch.empty(3)).all()
print(sorted(m for m in ("torch._inductor", "torch._dynamo", "sympy") if m in sys.modules),
      torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
"""


def test_finding_never_initialised_memory_loads_no_compiler_and_puts_torchs_mode_back():
    """Every build of user code marks torch.empty's memory; torch's public switch for that imports inductor, dynamo
    and sympy (about 2 CPU-seconds a build), which the build never uses."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _MARK_IN_A_FRESH_PROCESS], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "False", "False"]


def test_a_branch_on_a_value_fails_preflight_pointing_at_the_users_tracer_warning():
    spec = _spec(f"{DATA}/problems.py:BranchOnValue", {"x": "f32[4]"})
    (warning,) = _problems(spec, "warning")
    assert warning.startswith("TracerWarning at problems.py:117: Converting a tensor to a Python boolean")
    assert warning.endswith(
        "(this Python bool was fixed at trace time: the graph holds only the branch the example inputs took)"
    )
    (error,) = _problems(spec, "error")
    assert error.startswith("the trace does not hold for other inputs: on other values than the example's its 'output'")
    assert "the TracerWarning at problems.py:117 says where" in error


def test_tracer_warnings_raised_inside_libraries_are_counted_once_not_repeated():
    from neffbench.backends.tracing import TracerWarnings
    from neffbench.jobs.preflight import Report

    found = TracerWarnings()
    for _ in range(3):
        found.add(str(Path(torch.__file__).parents[1] / "transformers" / "masking_utils.py"), 229, "Converting ...")
    found.add(str(STATE), 33, "Iterating over a tensor might cause the trace to be incorrect.")
    report = Report()
    found.report(report)
    assert [s for s, _ in report.problems] == ["warning", "note"]
    assert report.problems[1][1].startswith(
        "3 TracerWarnings came from inside libraries (transformers/masking_utils.py:229 x3)"
    )


# ---- compiles: the state kept, and carried from call to call at every step ----


def _compile(spec, workdir, backend: str, env: dict[str, str] | None = None) -> CompileJob:
    with pytest.MonkeyPatch.context() as mp:
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        runner = CompileJob(spec, workdir=workdir, backend=backend)
        runner.start()  # the worker takes this environment with it
    return runner


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> dict:
    """Each compile once: the cache in cpu-check, with the fake legacy toolchain (on its "device") and the fake
    TorchNeuron; a prefill and a decode bucket; and the module without its state declared."""
    workdir = tmp_path_factory.mktemp("state")
    legacy = fake_env("success", runtime=True, **runtime_controls())
    on_device = dataclasses.replace(
        _gpt(), compiler=dataclasses.replace(_gpt().compiler, cpu_backend="off", target="trn1")
    )
    started = {
        "cpu-check": _compile(_gpt(), workdir, "cpu-check"),
        "prefill": _compile(_gpt((3,)), workdir, "cpu-check"),
        "decode": _compile(_gpt((1,)), workdir, "cpu-check"),
        "legacy": _compile(on_device, workdir, "neuron", legacy),
        "torchneuron": _compile(_gpt(), workdir, "torchneuron", torchneuron_env("success")),
        "undeclared-legacy": _compile(
            dataclasses.replace(on_device, module=ModuleSection(entry=f"{STATE}:StaticCacheGPT")),
            workdir,
            "neuron",
            legacy,
        ),
        "input-writer": _compile(_spec(f"{STATE}:ScalesInput", {"x": "f32[4] ones"}), workdir, "cpu-check"),
        "branch": _compile(_spec(f"{DATA}/problems.py:BranchOnValue", {"x": "f32[4]"}), workdir, "cpu-check"),
        "branch-legacy": _compile(
            _spec(f"{DATA}/problems.py:BranchOnValue", {"x": "f32[4]"}), workdir, "neuron", legacy
        ),
    }
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(started, pool.map(lambda r: r.wait(), started.values())))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cpu-check", "legacy", "torchneuron"])
def test_a_kv_cache_compiles_and_matches_eager_at_every_call(jobs, name):
    result = jobs[name]
    assert result.outcome == "succeeded", result.reason
    numerics = result.record["numerics"]
    assert [(s["step"], s["match"]) for s in numerics["steps"]] == [(0, True), (1, True), (2, True)]
    assert result.record["state"]["names"] == list(CACHES)
    how = result.record["state"]["how"]
    assert how.startswith(
        {"cpu-check": "passed in and returned", "legacy": "input_output_aliases", "torchneuron": "buffer mutation"}[
            name
        ]
    )
    ref = arrays.load(result.job_dir / "reference.npz")
    assert [ref.roles[k] for k in ref.arrays][1:] == [f"state:{n}" for n in CACHES]
    saved = arrays.load(result.job_dir / "inputs.npz")
    for key in list(saved.arrays)[2:]:  # the state saved is the one before any call: the empty cache
        assert not saved.arrays[key].any()


@pytest.mark.slow
def test_the_legacy_compile_passes_input_output_aliases_and_reproduce_does_too(jobs):
    job = jobs["legacy"].job_dir
    log = (job / "job.log").read_text()
    assert "match against the eager reference at each of 3 calls, the state carried from one to the next" in log
    script = (job / "reproduce.py").read_text()
    assert "input_output_aliases" in script and "STATE = (" in script


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "env"), [("legacy", fake_env("success")), ("torchneuron", torchneuron_env("success"))]
)
def test_reproduce_py_rebuilds_the_state_as_the_job_kept_it(jobs, name, env, tmp_path):
    import os
    import subprocess
    import sys

    script = jobs[name].job_dir / "reproduce.py"
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    inputs = torch.load(tmp_path / "out" / "example_inputs.pt")
    assert len(inputs) == 2 + len(CACHES) and not any(t.any() for t in inputs[2:])  # the empty cache, lifted
    reference = torch.load(tmp_path / "out" / "reference_outputs.pt")
    saved = arrays.load(jobs[name].job_dir / "reference.npz")
    for got, key in zip(reference, saved.arrays):
        assert np.array_equal(got.numpy(), saved.arrays[key])


@pytest.mark.slow
def test_an_undeclared_cache_never_reaches_the_compiler(jobs):
    result = jobs["undeclared-legacy"]
    assert result.outcome == "failed"
    assert result.reason.startswith("pre-flight: the forward writes into 4 buffers of the module")
    assert not list(result.job_dir.glob("**/*.neff"))


@pytest.mark.slow
def test_inputs_are_saved_before_any_call_writes_them(jobs):
    result = jobs["input-writer"]
    assert result.outcome == "succeeded", result.reason
    saved = arrays.load(result.job_dir / "inputs.npz")
    assert np.array_equal(saved.arrays["input0"], np.ones(4, dtype=np.float32))
    assert np.array_equal(arrays.load(result.job_dir / "reference.npz").arrays["output0"], np.full(4, 3.0, np.float32))


@pytest.mark.slow
def test_a_baked_branch_fails_before_any_compiler_and_cpu_check_says_why(jobs):
    legacy = jobs["branch-legacy"]
    assert legacy.outcome == "failed" and legacy.reason.startswith(
        "pre-flight: the trace does not hold for other inputs"
    )
    assert "problems.py:117" in legacy.reason
    assert not (legacy.job_dir / "compiler" / "command.txt").exists()
    cpu = jobs["branch"]
    assert cpu.outcome == "failed" and cpu.reason.startswith("the trace does not hold for other inputs")
    assert "the TracerWarning at problems.py:117 says where" in cpu.reason


def _run(job_dir: Path, runtime: str, steps: int, prefill: Path | None = None, env: dict | None = None):
    with pytest.MonkeyPatch.context() as mp:
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        runner = NeffRun(
            resolve(job_dir),
            runtime=runtime,
            iterations=2,
            warmup=0,
            steps=steps,
            prefill=resolve(prefill) if prefill else None,
        )
        runner.start()
    return runner.wait()


@pytest.mark.slow
def test_run_steps_carries_the_state_through_the_traced_graph(jobs):
    result = _run(jobs["cpu-check"].job_dir, "cpu", 4)
    assert result.outcome == "succeeded", result.reason
    calls = result.record["steps"]["calls"]
    assert [(c["step"], c["match"]) for c in calls] == [(1, True), (2, True), (3, True)]


@pytest.mark.slow
def test_run_steps_on_the_device_module_that_keeps_its_state(jobs):
    env = fake_env("success", runtime=True, **runtime_controls())
    result = _run(jobs["legacy"].job_dir, "torchscript", 3, env=env)
    assert result.outcome == "succeeded", result.reason
    assert result.record["steps"]["match"] and len(result.record["steps"]["calls"]) == 2


@pytest.mark.slow
def test_a_decode_loop_after_a_prefill_matches_eager_at_every_call(jobs):
    result = _run(jobs["decode"].job_dir, "cpu", 4, prefill=jobs["prefill"].job_dir)
    assert result.outcome == "succeeded", result.reason
    calls = result.record["steps"]["calls"]
    assert [c["step"] for c in calls] == ["prefill", 1, 2, 3, 4] and all(c["match"] for c in calls)
    from neffbench.runs.summary import summary_lines

    text = "\n".join(summary_lines(result.record))
    assert "calls in a row, the state carried: match at all 5 (after a prefill by" in text
    assert "call 1 (the prefill job): match" in text


def test_decode_positions_go_on_where_the_prefill_stopped():
    from neffbench.kernels import registry

    spec = _gpt((1,))
    kernel = registry.for_spec(spec)
    x, pos = kernel.step_inputs(spec, 1, {"x": 3 * 16, "input_pos": 3})
    assert pos.tolist() == [3] and tuple(x.shape) == (1, 1, 16)
    assert kernel.step_inputs(spec, 2, {"input_pos": 4})[1].tolist() == [4]


def test_the_fake_legacy_trace_keeps_no_state_without_aliases_and_keeps_it_with_them(tmp_path, monkeypatch):
    """As the docs say: a NEFF's weights are constants; only input_output_aliases' state tensors are kept."""
    from tests.fakes import PYTHON_DIR

    monkeypatch.chdir(tmp_path)  # the fake compiler, as the real one, writes its log to the working directory
    monkeypatch.syspath_prepend(str(PYTHON_DIR))
    for key, value in fake_env("success").items():
        monkeypatch.setenv(key, value)
    import torch_neuronx

    class Accumulates(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.total = torch.nn.Parameter(torch.zeros(2), requires_grad=False)

        def forward(self, x):
            self.total.add_(x)
            return (x * 1, self.total)

    x = torch.ones(2)
    plain = Accumulates()
    traced = torch_neuronx.trace(plain, x, compiler_workdir=str(tmp_path / "a"), compiler_args=["--target", "trn1"])
    assert [traced(x)[1].tolist() for _ in range(2)] == [[1.0, 1.0], [1.0, 1.0]]
    kept = Accumulates()
    traced = torch_neuronx.trace(
        kept,
        x,
        compiler_workdir=str(tmp_path / "b"),
        compiler_args=["--target", "trn1"],
        input_output_aliases={kept.total: 1},
    )
    assert [traced(x)[1].tolist() for _ in range(2)] == [[1.0, 1.0], [2.0, 2.0]]
    with pytest.raises(ValueError, match="a key is not a parameter of func"):
        torch_neuronx.trace(plain, x, compiler_workdir=str(tmp_path / "c"), input_output_aliases={x: 0})
    assert json.loads((tmp_path / "b" / "model" / "metadata.json").read_text())["inputs"][1]["shape"] == [2]


@pytest.mark.gui
@pytest.mark.slow
def test_keep_as_state_in_the_window_is_one_click_and_the_check_then_passes(make_window, qtbot):
    from PySide6.QtCore import Qt

    window = make_window()
    window.form.set_spec(_gpt(state=()))
    with qtbot.waitSignal(window.preview_controller.checked, timeout=120_000) as first:
        window.preview_panel.check_requested.emit()
    assert first.args[0]["state_found"] == list(CACHES)
    button = window.preview_panel.check_view.keep_state_button
    qtbot.waitUntil(button.isVisible, timeout=5_000)
    with qtbot.waitSignal(window.preview_controller.checked, timeout=120_000) as second:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.form.spec().module.state == CACHES
    assert window.form.has_unsaved_edits("module")  # an edit of the form, to save like any other
    assert second.args[0]["ok"] is True, second.args[0]["problems"]
    assert not button.isVisible()
