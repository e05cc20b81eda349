"""The run core without any runtime: arrays with their dtypes, IO and host checks, NRT error explanations, statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neffbench.neff import read_neff
from neffbench.runs import arrays, nrt_errors, preload_checks, runtimes
from neffbench.runs.stats import summarize
from tests.neff_factory import build_neff


def test_arrays_keep_bfloat16_and_the_call_order(tmp_path):
    a = arrays.Arrays()
    bf = torch.randn(3, 4).to(torch.bfloat16)
    a.add("input0", *arrays.from_tensor(bf), role="query")
    a.add("unused:mask", *arrays.from_tensor(torch.ones(2, dtype=torch.bool)), role="mask")
    a.add("input1", *arrays.from_tensor(torch.arange(5)), role="positions")
    back = arrays.load(arrays.save(tmp_path / "x.npz", a))
    assert list(back.arrays) == ["input0", "unused:mask", "input1"]
    assert back.neff_names == ["input0", "input1"]
    assert back.dtypes == {"input0": "bfloat16", "unused:mask": "bool", "input1": "int64"}
    assert torch.equal(arrays.to_tensor(back.arrays["input0"], "bfloat16"), bf)
    assert back.roles["input1"] == "positions"
    assert not list(tmp_path.glob(".*tmp"))


def test_unreadable_arrays_are_one_sentence(tmp_path):
    with pytest.raises(arrays.ArraysError, match="does not exist"):
        arrays.load(tmp_path / "none.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(arrays.ArraysError, match="is not a readable .npz archive"):
        arrays.load(tmp_path / "bad.npz")


def test_io_check_says_each_mismatch(tmp_path):
    neff = read_neff(
        build_neff(
            tmp_path / "m.neff",
            inputs={"x": ("float16", [128, 256]), "y": ("float16", [256, 128])},
            outputs={"output0": ("float16", [128, 128])},
        )
    )
    feeds = arrays.Arrays()
    feeds.add("x", np.zeros((128, 256), np.float32))
    feeds.add("z", np.zeros(3, np.float16))
    assert preload_checks.check_io(neff, feeds) == [
        "'z' is not an input of the NEFF (its inputs: x, y).",
        "input x is float16 in the NEFF, but the array given is float32.",
        "the NEFF takes y (float16 [256, 128]), but no array is given for it.",
    ]
    good = arrays.Arrays()
    good.add("x", np.zeros((128, 256), np.float16))
    good.add("y", np.zeros((256, 128), np.float16))
    assert preload_checks.check_io(neff, good) == []
    wrong = arrays.Arrays()
    wrong.add("x", np.zeros((128, 255), np.float16))
    wrong.add("y", np.zeros((256, 128), np.float16))
    assert preload_checks.check_io(neff, wrong) == [
        "input x has shape [128, 256] in the NEFF, but the array given has [128, 255]."
    ]


def test_host_check_compares_target_and_lnc(tmp_path, monkeypatch):
    neff = read_neff(
        build_neff(
            tmp_path / "m.neff",
            inputs={"x": ("float32", [2])},
            outputs={"o": ("float32", [2])},
            target="cayman",
            lnc_size=2,
        )
    )
    monkeypatch.setenv(preload_checks.LNC_ENV, "1")
    for family in ("trn1", "inf2"):  # alike: neither takes --lnc
        problems = preload_checks.check_host(neff, preload_checks.HostFacts(family=family))
        assert problems == [
            f"the NEFF was compiled for 'cayman' but this host is {family} ('sunda'). Compile it again with --target "
            f"{family}.",
            "the NEFF was compiled for LNC 2 but the runtime will use LNC 1 (NEURON_LOGICAL_NC_CONFIG or neuron-ls); "
            "set NEURON_LOGICAL_NC_CONFIG=2 or compile with no --lnc.",
        ]
    legacy = read_neff(
        build_neff(tmp_path / "l.neff", inputs={"x": ("float32", [2])}, outputs={"o": ("float32", [2])}, target="sunda")
    )
    legacy_hint = preload_checks.check_host(legacy, preload_checks.HostFacts(family="trn2"))[0]
    assert "A trn1/inf2 (sunda) NEFF on trn2 needs NEURON_RT_ALLOW_LEGACY_NEFF=1." in legacy_hint
    monkeypatch.setenv(preload_checks.LNC_ENV, "2")
    assert preload_checks.check_host(neff, preload_checks.HostFacts(family="trn2")) == []


@pytest.mark.parametrize("code", sorted(nrt_errors.CODES))
def test_every_documented_nrt_code_is_explained(code):
    name, why = nrt_errors.CODES[code]
    err = nrt_errors.explain(f"NrtError: NRT Error {name}({code}): something went wrong")
    assert (err.code, err.name, err.text, err.explanation) == (code, name, "something went wrong", why)
    assert err.sentence() == f"NRT Error {name}({code}): something went wrong — {why}"


def test_the_number_wins_and_runtime_log_lines_are_read():
    # One doc page contradicts the header: trust the number.
    assert nrt_errors.explain("NRT Error NRT_RESOURCE(1005): busy").explanation == nrt_errors.CODES[1005][1]
    line = "2024-Jul-30 14:22:31.244396 65191:69012 ERROR   NRT:nrt_infodump  Failure: NRT_RESOURCE in nrt_load()"
    err = nrt_errors.explain(line)
    assert (err.code, err.name) == (4, "NRT_RESOURCE")
    assert nrt_errors.explain("RuntimeError: something else") is None
    unknown = nrt_errors.explain("NRT Error NRT_NEW(77): new")
    assert unknown.explanation == "Runtime status 77 is not in the documented table."


def test_void_outputs_are_read_as_the_neffs_dtype():
    raw = np.array([1.5, -2.0], dtype=np.float16).view("V2")
    assert raw.dtype.kind == "V"
    assert runtimes.reinterpret(raw, "float16").tolist() == [1.5, -2.0]
    bits = torch.tensor([1.0, 2.0], dtype=torch.bfloat16).view(torch.uint16).numpy().view("V2")
    assert arrays.to_tensor(runtimes.reinterpret(bits, "bfloat16"), "bfloat16").tolist() == [1.0, 2.0]


def test_statistics_are_those_of_every_duration():
    durations = [1.0, 2.0, 3.0, 4.0, 100.0]
    s = summarize(durations, items_per_call=8)
    assert s["iterations"] == 5 and s["min_ms"] == 1.0 and s["max_ms"] == 100.0
    assert s["mean_ms"] == pytest.approx(22.0) and s["p50_ms"] == 3.0
    assert s["p90_ms"] == pytest.approx(np.percentile(durations, 90))
    assert s["std_ms"] == pytest.approx(np.std(durations))
    assert s["items_per_s"] == pytest.approx(8 / 0.022)
    assert summarize([]) == {"iterations": 0}


class _Host:
    """A host as the runtimes ask it: its devices and, per package, what importing it says."""

    flavour = None

    def __init__(self, devices: tuple[str, ...] = (), **imports: str):
        self.devices, self._imports = list(devices), imports

    def package(self, name: str) -> runtimes.Package:
        return runtimes.Package(name in self._imports, self._imports.get(name, f"no {name}"))


def test_auto_prefers_a_device_runtime_only_with_a_device():
    job = runtimes.Target(neff=True, job=True, neuron_model_pt=False)
    device = _Host(("/dev/neuron0",), nrtpy="nrtpy 2.32 imports")
    assert runtimes.choose("auto", device, job).reason == "auto: nrtpy 2.32 imports"
    alone = _Host(nrtpy="nrtpy 2.32 imports")
    assert runtimes.choose("auto", alone, job).verdicts["nrtpy"] == (
        True,
        False,
        "nrtpy 2.32 imports; no Neuron device under /dev/neuron*",
    )
    choice = runtimes.choose("auto", alone, job)
    assert choice.runtime.name == "cpu" and choice.reason.startswith("auto: no device runtime can run here")
    assert runtimes.choose("nrtpy", alone, job).runtime.name == "nrtpy"  # by name: the runtime says what is missing
    with pytest.raises(runtimes.RuntimeUnavailable, match="the spike runtime cannot run here: no spike."):
        runtimes.choose("spike", alone, job)


def test_a_run_cancelled_before_it_started_returns_its_record_path(tmp_path):
    """start() returns the record's path even when cancel() came first (it once returned the RunResult)."""
    from neffbench.runs.neff_run import NeffRun
    from neffbench.runs.subject import RunSubject

    run = NeffRun(RunSubject(tmp_path / "model.neff", None, {}, tmp_path / "runs"), runtime="cpu")
    run.cancel()
    path = run.start()
    assert path == run.path and path.parent == tmp_path / "runs" and path.suffix == ".json"
    result = run.wait()
    assert (result.path, result.outcome, result.reason) == (path, "cancelled", "cancelled before it started")
    assert json.loads(path.read_text(encoding="utf-8"))["outcome"] == "cancelled"
