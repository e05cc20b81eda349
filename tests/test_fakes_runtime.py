"""The Neuron runtime fakes (tests/fakes/runtime) behave as their documentation says.

nrtpy and spike run in-process (sys.path); neuron-ls, neuron-explorer and neuron-profile, and anything
that kills its process, run in subprocesses with ``runtime_env``, as the real ones run in their own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.fakes import (
    BIN_DIR,
    PYTHON_DIR,
    RUNTIME_BIN_DIR,
    RUNTIME_CONTROLS,
    RUNTIME_PYTHON_DIR,
    fake_env,
    runtime_env,
)
from tests.neff_factory import build_neff

LOG_LINE = re.compile(
    r"^\d{4}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6} \d+:\d+ ERROR\s+NRT:nrt_infodump\s+"
    r"Failure: (NRT_[A-Z_]+) in (nrt_load|nrt_execute|nrt_init)\(\)$",
    re.M,
)
PROFILE_ID = re.compile(r"^n_[0-9a-f]{40}$")
MODULES = ("nrtpy", "spike", "fake_libnrt")


def _drop_modules() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in MODULES:
            del sys.modules[name]


@pytest.fixture
def rt(monkeypatch):
    """Imports a runtime fake freshly, with no FAKE_* control set; closes its runtime afterwards."""
    for key in (*RUNTIME_CONTROLS, "NEURON_RT_VISIBLE_CORES", "NEURON_LOGICAL_NC_CONFIG"):
        monkeypatch.setenv(key, "")
        monkeypatch.delenv(key)
    monkeypatch.syspath_prepend(str(RUNTIME_PYTHON_DIR))
    _drop_modules()
    loaded = {}

    def load(name: str):
        import importlib

        loaded[name] = importlib.import_module(name)
        return loaded[name]

    yield load
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in loaded.values():
            try:
                module.reset()
            except Exception:  # noqa: BLE001 - a module that failed to import has nothing to reset
                pass
    _drop_modules()


@pytest.fixture
def neff(tmp_path) -> Path:
    return build_neff(
        tmp_path / "graph.neff",
        inputs={"a": ("float32", (4, 8)), "b": ("float16", (8,))},
        outputs={"out": ("float32", (4, 8)), "aux": ("float16", (2, 2))},
    )


@pytest.fixture
def bf16_neff(tmp_path) -> Path:
    return build_neff(tmp_path / "bf16.neff", inputs={"x": ("bfloat16", (2, 3))}, outputs={"y": ("bfloat16", (2, 3))})


def _feeds(mod, tensor_cls_name: str = "NrtpyTensor"):
    cls = getattr(mod, tensor_cls_name)
    return {
        "a": cls.from_numpy(np.arange(32, dtype=np.float32).reshape(4, 8), name="a"),
        "b": cls.from_numpy(np.ones(8, dtype=np.float16), name="b"),
    }


def _run(cmd: list[str], cwd: Path | None = None, **controls) -> subprocess.CompletedProcess:
    extra = controls.pop("extra", None)
    env = {**os.environ, **runtime_env(extra=extra, **controls)}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def _python(code: str, **controls) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-c", code], **controls)


# --- the helper ---------------------------------------------------------------------------------------------


def test_fake_env_is_unchanged_and_runtime_env_adds_the_runtime_fakes(monkeypatch):
    monkeypatch.setenv("FAKE_NRT_ERROR", "EXEC:NRT_TIMEOUT(5)")  # an outer value must not leak through
    plain = fake_env()
    assert plain["PYTHONPATH"].split(os.pathsep)[0] == str(PYTHON_DIR)
    assert str(RUNTIME_PYTHON_DIR) not in plain["PYTHONPATH"] and str(RUNTIME_BIN_DIR) not in plain["PATH"]
    assert not any(key in plain for key in RUNTIME_CONTROLS)
    env = runtime_env(
        durations_ms=[0.5, 0.61], error="LOAD:NRT_RESOURCE(4): no memory", profile_summary={"total_time": 0.01}
    )
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == [str(PYTHON_DIR), str(RUNTIME_PYTHON_DIR)]
    assert env["PATH"].split(os.pathsep)[:2] == [str(BIN_DIR), str(RUNTIME_BIN_DIR)]
    assert env["FAKE_NRT_DURATIONS_MS"] == "0.5,0.61" and env["FAKE_NRT_ERROR"] == "LOAD:NRT_RESOURCE(4): no memory"
    assert json.loads(env["FAKE_PROFILE_SUMMARY"]) == {"total_time": 0.01}
    assert set(RUNTIME_CONTROLS) <= set(env) and env["FAKE_NRT_CRASH"] == "" and env["FAKE_NEURON_LS"] == "trn2"


# --- nrtpy ---------------------------------------------------------------------------------------------------


def test_nrtpy_reads_tensor_info_from_the_neff(rt, sample_neff, neff):
    nrtpy = rt("nrtpy")
    model = nrtpy.NrtpyModel.load_from_neff(sample_neff)
    assert model.name == "nkipy_matmul_small"
    info = {k: (v.size, v.dtype, v.shape) for k, v in model.input_tensors_info.items()}
    assert info == {"x": (65536, "float16", [128, 256]), "y": (65536, "float16", [256, 128])}
    out = model.output_tensors_info["output0"]
    assert (out.size, out.dtype, out.shape) == (32768, "float16", [128, 128])
    assert repr(out) == "TensorMetadata(size=32768, dtype='float16', shape=[128, 128])"
    built = nrtpy.NrtpyModel.load_from_neff(str(neff), name="mine", core_id=0)
    assert built.name == "mine" and list(built.input_tensors_info) == ["a", "b"]
    assert list(built.output_tensors_info) == ["out", "aux"]


def test_nrtpy_call_returns_fake_outputs_by_name_and_zeros_for_the_rest(rt, neff, tmp_path, monkeypatch):
    nrtpy = rt("nrtpy")
    wanted = np.linspace(0, 1, 32, dtype=np.float32).reshape(4, 8)
    np.savez(tmp_path / "outs.npz", out=wanted)
    monkeypatch.setenv("FAKE_NRT_OUTPUTS", str(tmp_path / "outs.npz"))
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    feeds = _feeds(nrtpy)
    outs = model(inputs=feeds)
    assert set(outs) == {"out", "aux"} and all(isinstance(t, nrtpy.NrtpyTensor) for t in outs.values())
    np.testing.assert_array_equal(outs["out"].numpy(), wanted)
    assert outs["out"].numpy().dtype == np.float32
    assert outs["aux"].numpy().dtype == np.float16 and not outs["aux"].numpy().any()
    given = {
        "out": nrtpy.NrtpyTensor.from_numpy(np.zeros((4, 8), np.float32), name="out"),
        "aux": nrtpy.NrtpyTensor.from_numpy(np.ones((2, 2), np.float16), name="aux"),
    }
    assert model(inputs=feeds, outputs=given) is None
    np.testing.assert_array_equal(given["out"].numpy(), wanted)
    assert not given["aux"].numpy().any()


def test_nrtpy_void_outputs_reinterpret_with_the_neffs_dtype(rt, neff, tmp_path, monkeypatch):
    nrtpy = rt("nrtpy")
    wanted = np.full((4, 8), 2.5, dtype=np.float32)
    np.savez(tmp_path / "outs.npz", out=wanted, aux=np.full((2, 2), 3, dtype=np.float16))
    monkeypatch.setenv("FAKE_NRT_OUTPUTS", str(tmp_path / "outs.npz"))
    monkeypatch.setenv("FAKE_NRT_VOID", "1")
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    outs = model(inputs=_feeds(nrtpy))
    assert outs["out"].numpy().dtype.str == "|V4" and outs["aux"].numpy().dtype.str == "|V2"
    np.testing.assert_array_equal(outs["out"].numpy().view(np.float32), wanted)
    assert outs["aux"].numpy().view(np.float16).tolist() == [[3, 3], [3, 3]]
    assert model.output_tensors_info["out"].dtype == "float32"  # the metadata keeps the NEFF's dtype


def test_nrtpy_bfloat16_takes_bit_views_and_returns_void_without_ml_dtypes(rt, bf16_neff, tmp_path, monkeypatch):
    nrtpy = rt("nrtpy")
    bits = np.array([[0x3F80, 0x4000, 0x4040], [0, 0xBF80, 0x7F80]], dtype=np.uint16)  # 1, 2, 3, 0, -1, inf
    np.savez(tmp_path / "outs.npz", y=bits)
    monkeypatch.setenv("FAKE_NRT_OUTPUTS", str(tmp_path / "outs.npz"))
    model = nrtpy.NrtpyModel.load_from_neff(bf16_neff)
    assert model.input_tensors_info["x"].dtype == "bfloat16"
    y = model(inputs={"x": nrtpy.NrtpyTensor.from_numpy(np.zeros((2, 3), np.uint16), name="x")})["y"].numpy()
    try:
        import ml_dtypes
    except ImportError:
        assert y.dtype.str == "|V2"
    else:
        assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.view(np.uint16), bits)


def test_nrtpy_benchmark_reports_the_fake_durations(rt, neff, monkeypatch):
    nrtpy = rt("nrtpy")
    monkeypatch.setenv("FAKE_NRT_DURATIONS_MS", "0.5,0.61,0.7")
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    feeds = _feeds(nrtpy)
    r = model.benchmark(feeds, warmup_iter=3, benchmark_iter=5)
    assert isinstance(r, nrtpy.BenchmarkResult)
    assert r.durations_ms == pytest.approx([0.5, 0.61, 0.7, 0.5, 0.61])
    assert (r.iterations, r.warmup_iterations) == (5, 3)
    assert r.mean_ms == pytest.approx(np.mean(r.durations_ms)) and r.std_dev_ms == pytest.approx(np.std(r.durations_ms))
    assert (r.min_ms, r.max_ms) == (pytest.approx(0.5), pytest.approx(0.7))
    host = model.benchmark(feeds, warmup_iter=0, benchmark_iter=2, mode="host")
    assert host.durations_ms == pytest.approx([0.5, 0.61]) and host.iterations == 2
    monkeypatch.setenv("FAKE_NRT_EXTRA_ITERATIONS", "1")  # two device events per call, as a multi-subgraph NEFF
    assert model.benchmark(feeds, benchmark_iter=4).iterations == 8
    assert model.benchmark(feeds, benchmark_iter=4, mode="host").iterations == 4  # host mode counts calls
    monkeypatch.setenv("FAKE_NRT_DURATIONS_MS", "none")
    with pytest.raises(RuntimeError, match="No nc_exec_running events"):
        model.benchmark(feeds)
    with pytest.raises(ValueError, match="Invalid benchmark mode 'wall'"):
        model.benchmark(feeds, mode="wall")
    with pytest.raises(ValueError, match="benchmark_iter"):
        model.benchmark(feeds, benchmark_iter=0)


def test_nrtpy_default_device_durations_and_measured_host_time(rt, neff):
    nrtpy = rt("nrtpy")
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    r = model.benchmark(_feeds(nrtpy))
    assert r.durations_ms == [0.5] * 5 and r.std_dev_ms == 0
    host = model.benchmark(_feeds(nrtpy), benchmark_iter=3, mode="host")
    assert host.iterations == 3 and all(d > 0 for d in host.durations_ms)


@pytest.mark.parametrize("case", ["unknown name", "missing input", "wrong size", "unknown output"])
def test_nrtpy_io_mismatch_is_nrt_invalid(rt, neff, capfd, case):
    nrtpy = rt("nrtpy")
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    feeds = _feeds(nrtpy)
    outputs = None
    if case == "unknown name":
        feeds["c"] = feeds.pop("b")
    elif case == "missing input":
        del feeds["b"]
    elif case == "wrong size":
        feeds["b"] = nrtpy.NrtpyTensor.from_numpy(np.ones(9, dtype=np.float16), name="b")
    else:
        outputs = {
            "out": nrtpy.NrtpyTensor.from_numpy(np.zeros((4, 8), np.float32)),
            "extra": nrtpy.NrtpyTensor.from_numpy(np.zeros(4, np.float16)),
        }
    with pytest.raises(nrtpy.NrtError) as info:
        model(inputs=feeds, outputs=outputs)
    assert str(info.value) == "NRT Error NRT_INVALID(2): Failed to execute model"
    assert isinstance(info.value, RuntimeError) and not isinstance(info.value, nrtpy.NrtpyError)
    assert LOG_LINE.search(capfd.readouterr().err).groups() == ("NRT_INVALID", "nrt_execute")


@pytest.mark.parametrize(
    "control, when, message",
    [
        (
            "LOAD:NRT_RESOURCE(4): Failed to allocate device memory",
            "load",
            "NRT Error NRT_RESOURCE(4): Failed to allocate device memory",
        ),
        (
            "LOAD:NRT_UNSUPPORTED_NEFF_VERSION(10)",
            "load",
            "NRT Error NRT_UNSUPPORTED_NEFF_VERSION(10): Failed to load model",
        ),
        (
            "EXEC:NRT_EXEC_NC_BUSY(1005): NeuronCore is busy",
            "exec",
            "NRT Error NRT_EXEC_NC_BUSY(1005): NeuronCore is busy",
        ),
        ("EXEC:1006", "exec", "NRT Error NRT_EXEC_OOB(1006): Failed to execute model"),
        (
            "EXEC:NRT_EXEC_COMPLETED_WITH_NUM_ERR",
            "exec",
            "NRT Error NRT_EXEC_COMPLETED_WITH_NUM_ERR(1003): Failed to execute model",
        ),
        ("INIT:NRT_FAILURE(1)", "init", "NRT Error NRT_FAILURE(1): Failed to initialize NRT runtime"),
    ],
)
def test_nrtpy_injected_errors_have_the_runtime_format(rt, neff, capfd, monkeypatch, control, when, message):
    nrtpy = rt("nrtpy")
    monkeypatch.setenv("FAKE_NRT_ERROR", control)
    with pytest.raises(nrtpy.NrtError) as info:
        model = nrtpy.NrtpyModel.load_from_neff(neff)
        if when == "exec":
            model(inputs=_feeds(nrtpy))
        else:
            pytest.fail("loading should have failed")
    assert str(info.value) == message
    name = message.split()[2].split("(")[0]
    assert LOG_LINE.search(capfd.readouterr().err).groups() == (
        name,
        {"load": "nrt_load", "exec": "nrt_execute", "init": "nrt_init"}[when],
    )


def test_nrtpy_exec_error_also_fails_benchmark(rt, neff, monkeypatch):
    nrtpy = rt("nrtpy")
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    feeds = _feeds(nrtpy)
    monkeypatch.setenv("FAKE_NRT_ERROR", "EXEC:NRT_TIMEOUT(5)")
    with pytest.raises(nrtpy.NrtError, match=r"^NRT Error NRT_TIMEOUT\(5\): Failed to execute model$"):
        model.benchmark(feeds, mode="host")


def test_nrtpy_load_failures(rt, tmp_path):
    nrtpy = rt("nrtpy")
    with pytest.raises(nrtpy.NrtError, match=r"^NRT Error NRT_FAILURE\(1\): Failed to load model$"):
        nrtpy.NrtpyModel.load_from_neff(tmp_path / "nonexistent.neff")
    (tmp_path / "junk.neff").write_bytes(b"not a neff" * 200)
    with pytest.raises(nrtpy.NrtError, match=r"^NRT Error NRT_INVALID\(2\): Failed to load model$"):
        nrtpy.NrtpyModel.load_from_neff(tmp_path / "junk.neff")


def test_nrtpy_configure_reset_and_lifetimes(rt, neff):
    nrtpy = rt("nrtpy")
    with pytest.raises(TypeError):
        nrtpy.configure(visible_cores=0)
    with pytest.raises(ValueError):
        nrtpy.configure(visible_cores=[-1])
    nrtpy.configure(visible_cores=[0, 1])
    assert os.environ["NEURON_RT_VISIBLE_CORES"] == "0,1"
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    feeds = _feeds(nrtpy)
    with pytest.raises(nrtpy.NrtpyError):
        nrtpy.configure(visible_cores=[2])
    with pytest.raises(RuntimeError):  # configuration.rst: RuntimeError; errors.rst: NrtpyError (a RuntimeError)
        nrtpy.configure(visible_cores=[2])
    nrtpy.reset()
    with pytest.raises(nrtpy.NrtpyError):
        model(inputs=feeds)
    with pytest.raises(nrtpy.NrtpyError):
        feeds["a"].numpy()
    nrtpy.configure(visible_cores=[2, 3])
    assert os.environ["NEURON_RT_VISIBLE_CORES"] == "2,3"
    nrtpy.reset()
    nrtpy.reset()  # a no-op when nothing is open


def test_nrtpy_tensor_round_trip_and_write(rt):
    nrtpy = rt("nrtpy")
    array = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    t = nrtpy.NrtpyTensor.from_numpy(array, name="t")
    assert (t.shape, t.dtype, t.name) == ((3, 4), np.dtype(np.int32), "t")
    np.testing.assert_array_equal(t.numpy(), array)
    t.write_from_numpy(np.zeros((3, 4), np.int32))
    assert not t.numpy().any()
    with pytest.raises(ValueError, match="Size mismatch: source 8 bytes, target 48 bytes"):
        t.write_from_numpy(np.zeros(2, np.int32))


def test_nrtpy_save_trace_writes_an_ntff_beside_the_neff(rt, neff):
    nrtpy = rt("nrtpy")
    model = nrtpy.NrtpyModel.load_from_neff(neff)
    model(inputs=_feeds(nrtpy), save_trace=True)
    assert neff.with_suffix(".ntff").is_file()


def test_nrtpy_crash_kills_the_process_with_sigsegv(neff):
    code = (
        "import numpy as np, nrtpy\n"
        f"m = nrtpy.NrtpyModel.load_from_neff({str(neff)!r})\n"
        "print('loaded', flush=True)\n"
        "m(inputs={'a': nrtpy.NrtpyTensor.from_numpy(np.zeros((4, 8), np.float32)),"
        " 'b': nrtpy.NrtpyTensor.from_numpy(np.zeros(8, np.float16))})\n"
        "print('survived')\n"
    )
    proc = _python(code, crash=True)
    assert proc.returncode == -signal.SIGSEGV
    assert proc.stdout == "loaded\n"


def test_runtime_fakes_import_fails_without_libnrt():
    for module in ("nrtpy", "spike"):
        proc = _python(f"import {module}", import_error=True)
        assert proc.returncode == 1
        assert "ImportError: libnrt.so.1: cannot open shared object file: No such file or directory" in proc.stderr
        assert _python(f"import {module}").returncode == 0


# --- spike ---------------------------------------------------------------------------------------------------


def test_spike_has_the_same_shape_as_the_real_package(rt, sample_neff):
    spike = rt("spike")
    for name in (
        "SpikeModel",
        "SpikeTensor",
        "BenchmarkResult",
        "NrtError",
        "SpikeError",
        "SystemTraceSession",
        "TensorMetadata",
        "ModelTensorInfo",
        "configure",
        "reset",
        "get_spike_singleton",
    ):
        assert hasattr(spike, name), name
    assert issubclass(spike.NrtError, RuntimeError) and issubclass(spike.SpikeError, RuntimeError)
    import spike.spike_model
    import spike.spike_tensor

    assert spike.spike_model.SpikeModel is spike.SpikeModel and spike.spike_tensor.SpikeTensor is spike.SpikeTensor
    model = spike.SpikeModel.load_from_neff(sample_neff)
    assert list(model.input_tensors_info) == ["x", "y"] and model.output_tensors_info["output0"].shape == [128, 128]
    assert model.model_ref.core_id == 0 and model.neff_path == Path(sample_neff)


def test_spike_value_error_lists_the_expected_names(rt, neff):
    spike = rt("spike")
    model = spike.SpikeModel.load_from_neff(neff)
    feeds = _feeds(spike, "SpikeTensor")
    feeds["z"] = feeds.pop("b")
    with pytest.raises(ValueError) as info:
        model(feeds)
    assert str(info.value) == "Unknown input(s) {'z'} for model 'graph'. Expected inputs: ['a', 'b']"
    out = {"result": spike.SpikeTensor.from_numpy(np.zeros((4, 8), np.float32), "result")}
    with pytest.raises(ValueError) as info:
        model(_feeds(spike, "SpikeTensor"), out)
    assert str(info.value) == "Unknown output(s) {'result'} for model 'graph'. Expected outputs: ['out', 'aux']"


def test_spike_checks_shapes_and_dtypes_with_asserts(rt, neff):
    spike = rt("spike")
    model = spike.SpikeModel.load_from_neff(neff)
    feeds = _feeds(spike, "SpikeTensor")
    feeds["a"] = spike.SpikeTensor.from_numpy(np.zeros((8, 4), np.float32), "a")
    with pytest.raises(AssertionError, match=re.escape("Input a: expected shape [4, 8], got (8, 4)")):
        model(feeds)
    feeds["a"] = spike.SpikeTensor.from_numpy(np.zeros((4, 8), np.float16), "a")
    with pytest.raises(AssertionError, match="Input a: expected dtype float32, got float16"):
        model(feeds)


def test_spike_missing_input_reaches_the_runtime(rt, neff):
    spike = rt("spike")
    model = spike.SpikeModel.load_from_neff(neff)
    feeds = _feeds(spike, "SpikeTensor")
    del feeds["b"]
    with pytest.raises(spike.NrtError, match=r"^NRT Error NRT_INVALID\(2\): Failed to execute model$"):
        model(feeds)


def test_spike_call_and_benchmark(rt, neff, tmp_path, monkeypatch):
    spike = rt("spike")
    wanted = np.full((2, 2), 7, dtype=np.float16)
    np.savez(tmp_path / "outs.npz", aux=wanted)
    monkeypatch.setenv("FAKE_NRT_OUTPUTS", str(tmp_path / "outs.npz"))
    monkeypatch.setenv("FAKE_NRT_VOID", "1")  # spike maps dtypes itself: no void outputs
    monkeypatch.setenv("FAKE_NRT_DURATIONS_MS", "1.0,2.0")
    model = spike.SpikeModel.load_from_neff(neff)
    feeds = _feeds(spike, "SpikeTensor")
    outs = model(feeds)
    assert outs["aux"].numpy().dtype == np.float16
    np.testing.assert_array_equal(outs["aux"].numpy(), wanted)
    assert model(feeds, outs) is None
    r = model.benchmark(feeds, warmup_iter=1, benchmark_iter=3)
    assert isinstance(r, spike.BenchmarkResult)
    assert (r.durations_ms, r.iterations, r.warmup_iterations) == ([1.0, 2.0, 1.0], 3, 1)
    assert r.mean_ms == pytest.approx(4 / 3)
    assert repr(r).startswith("BenchmarkResult(mean=1.3333ms, min=1.0000ms, max=2.0000ms")
    monkeypatch.setenv("FAKE_NRT_EXTRA_ITERATIONS", "2")
    assert model.benchmark(feeds, benchmark_iter=2).iterations == 6
    monkeypatch.setenv("FAKE_NRT_ERROR", "EXEC:NRT_EXEC_NC_BUSY(1005)")
    with pytest.raises(spike.NrtError, match=r"^NRT Error NRT_EXEC_NC_BUSY\(1005\): Failed to execute model$"):
        model.benchmark(feeds)


def test_spike_bfloat16(rt, bf16_neff):
    spike = rt("spike")
    model = spike.SpikeModel.load_from_neff(bf16_neff)
    try:
        import ml_dtypes
    except ImportError:
        x = spike.SpikeTensor.from_numpy(np.zeros((2, 3), np.uint16), "x")
        assert model({"x": x})["y"].numpy().dtype == np.uint16
    else:
        x = spike.SpikeTensor.from_numpy(np.zeros((2, 3), ml_dtypes.bfloat16), "x")
        assert model({"x": x})["y"].numpy().dtype == np.dtype(ml_dtypes.bfloat16)


def test_spike_errors_lifetimes_and_configure(rt, neff, tmp_path, monkeypatch):
    spike = rt("spike")
    with pytest.raises(spike.SpikeError) as info:
        spike.SpikeModel.load_from_neff(tmp_path / "gone.neff")
    assert str(info.value) == (
        f"Spike Error: Failed to open NEFF file: {tmp_path / 'gone.neff'}. Please check if "
        "the file exists and have read permission."
    )
    monkeypatch.setenv("FAKE_NRT_ERROR", "LOAD:NRT_RESOURCE(4)")
    with pytest.raises(spike.NrtError, match=r"^NRT Error NRT_RESOURCE\(4\): Failed to load model$"):
        spike.SpikeModel.load_from_neff(neff)
    monkeypatch.delenv("FAKE_NRT_ERROR")
    model = spike.SpikeModel.load_from_neff(neff)
    feeds = _feeds(spike, "SpikeTensor")
    with pytest.raises(RuntimeError, match="Spike runtime is already active"):
        spike.configure(visible_cores=[1])
    with pytest.warns(UserWarning, match=r"spike.reset\(\) called"):
        spike.reset()
    with pytest.raises(spike.SpikeError, match="Unable to execute an unloaded model"):
        model(feeds)  # allocating its outputs opened a new runtime, as in the real spike
    with pytest.warns(UserWarning):
        spike.reset()
    spike.configure(visible_cores=range(2))
    assert os.environ["NEURON_RT_VISIBLE_CORES"] == "0,1"


# --- neuron-ls -----------------------------------------------------------------------------------------------

DEVICE_KEYS = {
    "instance_type",
    "instance_id",
    "neuron_device",
    "bdf",
    "cpu_affinity",
    "numa_node",
    "connected_to",
    "nc_count",
    "logical_neuroncore_config",
    "memory_size",
    "neuroncore_ids",
    "neuron_processes",
}


def test_neuron_ls_json_trn2():
    proc = _run(["neuron-ls", "-j"])
    assert proc.returncode == 0, proc.stderr
    devices = json.loads(proc.stdout)
    assert len(devices) == 1 and set(devices[0]) == DEVICE_KEYS
    d = devices[0]
    assert (d["nc_count"], d["logical_neuroncore_config"], d["neuroncore_ids"]) == (4, 2, [0, 1, 2, 3])
    assert d["memory_size"] == 96 * 2**30 and d["neuron_processes"] == [] and d["instance_type"].startswith("trn2")
    lnc1 = json.loads(_run(["neuron-ls", "--json-output"], extra={"NEURON_LOGICAL_NC_CONFIG": "1"}).stdout)[0]
    assert (lnc1["nc_count"], lnc1["logical_neuroncore_config"], lnc1["neuroncore_ids"]) == (8, 1, list(range(8)))


def test_neuron_ls_scenarios(tmp_path):
    none = _run(["neuron-ls", "-j"], neuron_ls="none")
    assert (none.returncode, json.loads(none.stdout)) == (0, [])
    busy = json.loads(_run(["neuron-ls", "-j"], neuron_ls="busy").stdout)[0]
    assert busy["neuron_processes"] == [{"pid": 4242, "command": "python", "neuron_runtime_version": "2.0.0"}]
    custom = tmp_path / "ls.json"
    custom.write_text('[{"neuron_device": 0, "nc_count": 2}]\n')
    assert _run(["neuron-ls", "-j"], neuron_ls=custom).stdout == custom.read_text()
    assert _run(["neuron-ls", "-j"], neuron_ls="trn9").returncode == 2


def test_neuron_ls_table():
    table = _run(["neuron-ls"]).stdout
    assert "instance-type: trn2.3xlarge" in table and "logical-neuroncore-config: 2" in table
    assert re.search(r"\| NEURON \| NEURON \| NEURON \|", table) and "| 0      | 4      | 96 GB  |" in table
    assert "PID" not in table
    wide = _run(["neuron-ls", "--wide"], neuron_ls="busy").stdout
    assert "COMMAND" in wide and re.search(r"\| 4242 +\| python +\| 2\.0\.0 +\|", wide)


# --- neuron-explorer / neuron-profile ------------------------------------------------------------------------


def test_explorer_capture_writes_the_session_file(tmp_path, sample_neff):
    out = tmp_path / "prof" / "profile.ntff"
    proc = _run(["neuron-explorer", "capture", "-n", str(sample_neff), "-s", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and out.stat().st_size > 0
    assert str(out) in proc.stdout


def test_explorer_capture_nth_exec_and_inputs(tmp_path, sample_neff):
    np.save(tmp_path / "x.npy", np.ones((128, 256), np.float16))
    proc = _run(
        [
            "neuron-explorer",
            "capture",
            "-n",
            str(sample_neff),
            "-s",
            "profile.ntff",
            "x",
            "x.npy",
            "--profile-nth-exec=2",
        ],
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "profile_exec_2.ntff").is_file() and not (tmp_path / "profile.ntff").exists()
    proc = _run(
        [
            "neuron-explorer",
            "capture",
            "-n",
            str(sample_neff),
            "-s",
            "p.ntff",
            "--num-exec",
            "4",
            "--profile-nth-exec",
            "2",
        ],
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and {p.name for p in tmp_path.glob("p_*.ntff")} == {"p_exec_2.ntff", "p_exec_4.ntff"}


@pytest.mark.parametrize("name, array", [("z", np.ones((128, 256), np.float16)), ("x", np.ones((2, 2), np.float16))])
def test_explorer_capture_rejects_inputs_the_neff_lacks(tmp_path, sample_neff, name, array):
    np.save(tmp_path / "in.npy", array)
    proc = _run(["neuron-explorer", "capture", "-n", str(sample_neff), "-s", "p.ntff", name, "in.npy"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "NRT Error NRT_INVALID(2): Failed to execute model" in proc.stderr
    assert not list(tmp_path.glob("*.ntff"))


def test_explorer_capture_collectives_ranks(tmp_path, sample_neff):
    base = ["neuron-explorer", "capture", "-n", str(sample_neff), "-s", "out/profile.ntff"]
    assert _run([*base, "-r", "2"], cwd=tmp_path).returncode == 0
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"profile_rank_0.ntff", "profile_rank_1.ntff"}
    assert (
        _run([*base[:-1], "one/profile.ntff", "-r", "4", "-i", "1", "--profile-nth-exec=2"], cwd=tmp_path).returncode
        == 0
    )
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["profile_rank_1_exec_2.ntff"]


def test_explorer_capture_save_output_npy(tmp_path, sample_neff, bf16_neff):
    wanted = np.arange(128 * 128, dtype=np.float16).reshape(128, 128)
    np.savez(tmp_path / "outs.npz", output0=wanted)
    proc = _run(
        ["neuron-explorer", "capture", "-n", str(sample_neff), "--disable-profile", "--save-output-npy"],
        cwd=tmp_path,
        outputs=tmp_path / "outs.npz",
    )
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("*.ntff"))
    saved = np.load(tmp_path / "output0.npy")
    assert saved.dtype == np.float16 and saved.shape == (128, 128)
    np.testing.assert_array_equal(saved, wanted)
    proc = _run(
        ["neuron-explorer", "capture", "-n", str(bf16_neff), "--disable-profile", "--save-output-npy"], cwd=tmp_path
    )
    assert proc.returncode == 1
    assert "failed to save output y to file: unsupported type for npy output: bfloat16" in proc.stderr


def test_explorer_capture_runtime_failures(tmp_path, sample_neff):
    base = ["neuron-explorer", "capture", "-n", str(sample_neff), "-s", "p.ntff"]
    busy = _run(base, cwd=tmp_path, error="EXEC:NRT_EXEC_NC_BUSY(1005): NeuronCore 0 is in use")
    assert busy.returncode == 1 and "NRT Error NRT_EXEC_NC_BUSY(1005): NeuronCore 0 is in use" in busy.stderr
    assert LOG_LINE.search(busy.stderr).groups() == ("NRT_EXEC_NC_BUSY", "nrt_execute")
    assert not (tmp_path / "p.ntff").exists()
    ignored = _run([*base, "--ignore-exec-errors"], cwd=tmp_path, error="EXEC:NRT_EXEC_OOB(1006)")
    assert ignored.returncode == 0 and (tmp_path / "p.ntff").is_file()
    load = _run(base, cwd=tmp_path, error="LOAD:NRT_LOAD_NOT_ENOUGH_NC(9)")
    assert load.returncode == 1 and "NRT Error NRT_LOAD_NOT_ENOUGH_NC(9): Failed to load model" in load.stderr
    missing = _run(["neuron-explorer", "capture", "-n", str(tmp_path / "none.neff")], cwd=tmp_path)
    assert missing.returncode == 1 and "NRT Error NRT_FAILURE(1): Failed to load model" in missing.stderr
    assert _run(base, cwd=tmp_path, crash=True).returncode == -signal.SIGSEGV


def test_explorer_view_summary_json(tmp_path, sample_neff):
    assert (
        _run(
            ["neuron-explorer", "capture", "-n", str(sample_neff), "-s", "prof/profile.ntff", "--profile-nth-exec=2"],
            cwd=tmp_path,
            durations_ms=[2.0],
        ).returncode
        == 0
    )
    # A device profile is processed as a matched NEFF/NTFF pair: a folder with the NTFF alone says so and fails.
    alone = _run(["neuron-explorer", "view", "-d", "prof", "--output-format", "summary-json"], cwd=tmp_path)
    assert alone.returncode == 1 and "no NEFF found for profile_exec_2.ntff" in alone.stderr
    shutil.copy(sample_neff, tmp_path / "prof" / "model.neff")
    proc = _run(["neuron-explorer", "view", "-d", "prof", "--output-format", "summary-json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    nodes = json.loads(proc.stdout)
    ((pid, summary),) = nodes.items()
    assert PROFILE_ID.match(pid)
    assert summary["total_time"] == pytest.approx(0.002)  # seconds: the second execution, 2 ms
    assert 0 <= summary["mfu_estimated_percent"] <= 1
    assert summary["hbm_read_bytes"] == 2 * 65536 and summary["hbm_write_bytes"] == 32768
    first = _run(
        ["neuron-explorer", "capture", "-n", str(sample_neff), "-s", "first.ntff"], cwd=tmp_path, durations_ms=[2.0]
    )
    assert first.returncode == 0
    view = _run(
        ["neuron-explorer", "view", "-n", str(sample_neff), "-s", "first.ntff", "--output-format", "summary-json"],
        cwd=tmp_path,
        profile_summary={"mfu_estimated_percent": 0.5, "extra": 1},
    )
    (summary,) = json.loads(view.stdout).values()
    assert summary["total_time"] == pytest.approx(0.003)  # the first execution carries ~1 ms of start-up
    assert (summary["mfu_estimated_percent"], summary["extra"]) == (0.5, 1)
    text = _run(
        ["neuron-explorer", "view", "-n", str(sample_neff), "-s", "first.ntff", "--output-format", "summary-text"],
        cwd=tmp_path,
    )
    assert re.search(r"^total_time\s+0\.003$", text.stdout, re.M)
    assert (
        _run(["neuron-explorer", "view", "-d", "empty", "--output-format", "summary-json"], cwd=tmp_path).returncode
        == 1
    )


def test_neuron_profile_is_deprecated_but_works(tmp_path, sample_neff):
    proc = _run(["neuron-profile", "capture", "-n", str(sample_neff), "-s", "profile.ntff"], cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / "profile.ntff").is_file()
    assert "deprecated" in proc.stderr and "neuron-explorer" in proc.stderr
    summary = _run(
        ["neuron-profile", "view", "-n", str(sample_neff), "-s", "profile.ntff", "--output-format", "summary-json"],
        cwd=tmp_path,
    )
    assert summary.returncode == 0 and "total_time" in next(iter(json.loads(summary.stdout).values()))
    ui = _run(["neuron-profile", "view", "-n", str(sample_neff), "-s", "profile.ntff"], cwd=tmp_path)
    assert ui.returncode == 1 and 'influxdb not setup correctly: exec: "influx"' in ui.stderr
