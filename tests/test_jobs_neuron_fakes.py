"""The neuron backend against the fake torch_neuronx and neuronx-cc: every scenario, each a real worker process.

The jobs start one after another (each with its own fake environment) and then run side by side,
so the module costs about as much as its slowest few jobs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from neffbench.jobs import CompileJob, JobResult
from neffbench.kernels.rope.build import io_signature
from neffbench.presets import load_preset
from tests.fakes import fake_env

pytestmark = pytest.mark.slow

SEED = load_preset("seed")
KEYLESS = dataclasses.replace(SEED, name="keyless", model=dataclasses.replace(SEED.model, with_key=False))
# name: (scenario, spec, backend, fakes on PATH)
SCENARIOS = {
    "success": ("success", SEED, "auto", True),
    "hashed-name": ("hashed-name", SEED, "neuron", True),
    "compile-error": ("compile-error", SEED, "auto", True),
    "oom": ("oom", SEED, "auto", True),
    "split-output": ("split-output", SEED, "auto", True),
    "dropped-flag": ("dropped-flag", SEED, "auto", True),
    "python-error": ("python-error", SEED, "auto", True),
    "worker-segfault": ("worker-segfault", SEED, "auto", True),
    "keyless": ("success", KEYLESS, "auto", True),
    "no-compiler": ("success", SEED, "neuron", False),
    "auto-no-compiler": ("success", SEED, "auto", False),
}


@dataclass
class Run:
    result: JobResult
    lines: list[str] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)

    @property
    def record(self) -> dict:
        return self.result.record

    @property
    def log(self) -> str:
        return (self.result.job_dir / "job.log").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Run]:
    workdir = tmp_path_factory.mktemp("neuron-jobs")
    started: dict[str, tuple[CompileJob, list, list]] = {}
    for name, (scenario, spec, backend, on_path) in SCENARIOS.items():
        lines: list[str] = []
        events: list[dict] = []
        with pytest.MonkeyPatch.context() as mp:
            for key, value in fake_env(scenario, path=on_path).items():
                mp.setenv(key, value)
            runner = CompileJob(spec, workdir=workdir, backend=backend, on_line=lines.append, on_event=events.append)
            runner.start()  # the worker takes this environment with it
        started[name] = (runner, lines, events)
    with ThreadPoolExecutor(len(started)) as pool:
        results = dict(zip(started, pool.map(lambda item: item[0].wait(), started.values())))
    return {name: Run(results[name], started[name][1], started[name][2]) for name in started}


def test_success_makes_a_neff_with_the_real_names_and_shapes(runs):
    from neffbench.neff import read_neff

    run = runs["success"]
    rec = run.record
    assert (run.result.outcome, run.result.exit_code, run.result.reason) == ("succeeded", 0, None)
    assert rec["backend"] == "neuron" and rec["makes_neff"] is True and "neuronx-cc is on PATH" in rec["backend_reason"]
    assert rec["cpu_backend"] is True and "no Neuron device" in rec["cpu_backend_reason"]
    assert [n["path"] for n in rec["neffs"]] == ["compiler/graph.neff"]
    neff_path = run.result.job_dir / "compiler" / "graph.neff"
    assert rec["neffs"][0]["sha256"] == hashlib.sha256(neff_path.read_bytes()).hexdigest()
    assert rec["neffs"][0]["size"] == neff_path.stat().st_size
    info = read_neff(neff_path)
    ins, outs = io_signature(SEED)
    assert [(t.name, list(t.shape)) for t in info.inputs] == [(s.name, list(s.shape)) for s in ins]
    assert [(t.name, t.dtype, list(t.shape)) for t in info.outputs] == [(s.name, s.dtype, list(s.shape)) for s in outs]
    assert rec["model_pt"]["path"] == "model.pt" and (run.result.job_dir / "reproduce.py").is_file()
    assert rec["versions"]["torch_neuronx"].endswith("+fake") and rec["versions"]["neuronx_cc"].endswith("+fake")


def test_success_record_of_stages_passes_and_commands(runs):
    run = runs["success"]
    rec = run.record
    assert list(rec["stages"]) == [
        "building",
        "weights",
        "reference",
        "tracing",
        "compiling",
        "saving",
        "structure",
        "verifying",
        "done",
    ]
    assert all(s["start"] and s["end"] and s["duration_s"] is not None for s in rec["stages"].values())
    compiler = rec["compiler"]
    assert compiler["status"] == "PASS" and compiler["pipeline"][0] == "Frontend"
    assert [p["name"] for p in compiler["passes"]] == ["Frontend", "WalrusDriver", "BIRLinker", "Kelper", "SaveTemps"]
    assert all(p["started"] and p["duration_s"] is not None for p in compiler["passes"])
    cmd = rec["compiler_command"]
    assert cmd["actual_source"] == "command.txt" and cmd["dropped"] == []
    assert cmd["actual"] == cmd["requested"]
    assert cmd["requested"][:2] == ["neuronx-cc", "compile"]
    assert cmd["requested_args"][-2:] == ["--logfile", str(run.result.job_dir / "compiler" / "log-neuron-cc.txt")]
    assert ["--verbose", "info"] == cmd["requested_args"][:2]
    assert {"--target", "trn2", "--lnc", "2"} <= set(cmd["requested_args"])
    numerics = rec["numerics"]
    assert numerics["checked"] is False and numerics["match"] is None
    assert (
        "device verification skipped" in numerics["skipped_reason"] and "cpu_backend=True" in numerics["skipped_reason"]
    )
    assert rec["metrics"]["compile_s"] > 0 and rec["metrics"]["trace_s"] > 0


def test_success_events_and_logs(runs):
    run = runs["success"]
    kinds = [e["type"] for e in run.events]
    assert kinds[0] == "started" and kinds[-1] == "finished" and kinds.count("finished") == 1
    assert run.events[-1]["outcome"] == "succeeded"
    assert all(e["job_id"] == run.record["job_id"] and e["num_tokens"] == 1 for e in run.events)
    passes = [(e["name"], e["state"]) for e in run.events if e["type"] == "pass"]
    assert passes[:2] == [("Frontend", "started"), ("Frontend", "finished")] and len(passes) == 10
    stages = [e["stage"] for e in run.events if e["type"] == "stage"]
    assert stages[stages.index("tracing") + 1] == "compiling"
    log = run.log
    assert log.splitlines() == run.lines
    assert "Compiler status PASS" in log
    # Records the compiler printed on stdout and wrote to its log file appear once.
    assert log.count("Running Frontend") == 1
    assert "internal detail ✓ (only in the log file)" in log
    assert not any(line.startswith("@@neffbench") for line in log.splitlines())
    on_disk = [json.loads(line) for line in (run.result.job_dir / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in on_disk] == kinds
    assert json.loads((run.result.job_dir / "job.json").read_text()) == json.loads(json.dumps(run.record))


def test_hashed_neff_name_is_found(runs):
    rec = runs["hashed-name"].record
    assert runs["hashed-name"].result.outcome == "succeeded"
    [neff] = rec["neffs"]
    assert neff["path"].startswith("compiler/graph.") and neff["path"].endswith(".neff")
    assert neff["path"] != "compiler/graph.neff"


def test_compile_error_names_the_first_error_and_keeps_the_log(runs):
    run = runs["compile-error"]
    rec = run.record
    assert run.result.outcome == "failed" and run.result.exit_code == 1
    assert rec["reason"] == "neuronx-cc failed with 1: the compiler reported an error (during compiling)"
    assert rec["neffs"] == [] and rec["neff_note"] == "no NEFF was produced"
    assert rec["compiler"]["status"] == "FAIL" and rec["compiler"]["exit_code"] == 1
    assert rec["compiler"]["error_codes"] == ["NLA001"]
    error = rec["error"]
    assert error["code"] == "NLA001" and "Unhandled exception" in error["message"]
    assert any("Running WalrusDriver" in line for line in error["before"])
    assert any("Please open a support ticket" in line for line in error["after"])
    # The root cause printed only on stdout is kept.
    assert "Root cause (stdout only)" in run.log
    assert any(e["type"] == "compiler_error" and e["code"] == "NLA001" for e in run.events)
    assert run.events[-1]["reason"] == rec["reason"]


def test_oom_kill_is_explained(runs):
    run = runs["oom"]
    assert run.result.outcome == "failed"
    assert "neuronx-cc failed with -9" in run.result.reason and "out-of-memory" in run.result.reason
    assert run.record["compiler"]["exit_code"] == -9
    assert "out-of-memory" in run.record["compiler"]["exit_explanation"]


def test_output_split_across_stdout_stderr_and_the_log_file(runs):
    run = runs["split-output"]
    assert run.result.outcome == "succeeded"
    log = run.log
    for text in (
        "stdout only: λ → ✓ naïve",
        "stderr only: warning from a helper ü",
        "log file only: ∑ détail",
        "unterminated last line",
    ):
        assert text in log, text
    assert log.count("on stdout and in the log file") == 1
    assert "\ufffd" not in log
    assert run.record["compiler"]["duplicate_records_dropped"] > 0


def test_a_silently_dropped_flag_is_visible(runs):
    rec = runs["dropped-flag"].record
    assert rec["compiler_command"]["dropped"] == ["--lnc 2"]
    assert "--lnc" in rec["compiler_command"]["requested"] and "--lnc" not in rec["compiler_command"]["actual"]
    assert any("--lnc 2" in w for w in rec["warnings"])
    assert "missing from the command actually run: --lnc 2" in runs["dropped-flag"].log


def test_python_exception_in_the_module_fails_with_one_line(runs):
    run = runs["python-error"]
    assert run.result.outcome == "failed" and run.result.exit_code == 1
    assert run.result.reason == (
        "RuntimeError during tracing: Only tensors, lists, tuples of tensors, or dictionary "
        "of tensors can be output from traced functions"
    )
    assert "Traceback (most recent call last)" in run.log


def test_a_crash_of_the_worker_is_a_failure_with_its_signal(runs):
    run = runs["worker-segfault"]
    assert run.result.outcome == "failed" and run.result.exit_code == -11
    assert run.result.reason.startswith("the worker died from SIGSEGV (-11")
    assert "'tracing'" in run.result.reason
    assert "Fatal Python error: Segmentation fault" in run.log
    assert run.record["stages"]["tracing"]["end"] is not None


def test_keyless_spec_has_one_output(runs):
    from neffbench.neff import read_neff

    run = runs["keyless"]
    assert run.result.outcome == "succeeded"
    info = read_neff(run.result.job_dir / run.record["neffs"][0]["path"])
    assert [t.name for t in info.outputs] == ["output0"] and [t.name for t in info.inputs] == [
        "input0",
        "input1",
        "input2",
    ]


def test_missing_neuronx_cc_fails_when_neuron_is_requested(runs):
    run = runs["no-compiler"]
    assert run.result.outcome == "failed" and run.record["neffs"] == []
    assert run.result.reason == "the neuron backend was requested but neuronx-cc: not on PATH (during start)"


def test_auto_without_the_compiler_falls_back_to_cpu_check(runs):
    run = runs["auto-no-compiler"]
    assert run.result.outcome == "succeeded"
    rec = run.record
    assert rec["backend"] == "cpu-check" and rec["makes_neff"] is False and rec["neffs"] == []
    assert rec["backend_reason"].startswith("neuronx-cc not available")
    assert rec["neff_note"] == "no NEFF (cpu-check)"


def test_every_job_has_its_own_directory(runs):
    dirs = [run.result.job_dir for run in runs.values()]
    assert len(set(dirs)) == len(dirs)
    assert all(Path(d, "spec.toml").is_file() and Path(d, "job.log").is_file() for d in dirs)
