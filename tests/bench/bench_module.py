"""The module kernel's figures: a resolve-and-check round trip for a tiny BERT through the warm probe
(and the GUI thread meanwhile), and a module compile against a bare torch.jit.trace script of the
same wrapper."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MLP = REPO / "tests" / "data" / "modules" / "mlp.py"
ROUNDS = 7
ROUND_TRIPS = 5
TARGET_ROUND_TRIP_S, TARGET_STALL_MS, TARGET_FRACTION = 3.0, 50.0, 0.10

# What the job traces, with nothing of the workbench around it: load the file, build the module,
# wrap it as the job does (inputs by name, a flat tuple out), trace, save, leave without teardown.
BARE = f"""
import importlib.util, os, sys
import torch
spec = importlib.util.spec_from_file_location("mlp", {str(MLP)!r})
mlp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mlp)
inner = mlp.make_mlp(hidden_size=64).eval()

class Wrapper(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        out = self.inner(x=x)
        return (out,)

x = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
traced = torch.jit.trace(Wrapper(inner), (x,), strict=False, check_trace=False)
torch.jit.save(traced, sys.argv[1])
os._exit(0)
"""


def _timed(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _compile_overhead() -> list[str]:
    bare, job = [], []
    with tempfile.TemporaryDirectory(prefix="neffbench-bench-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "neffbench",
            "compile",
            f"{MLP}:make_mlp",
            "--input",
            "x:f32[8,64]",
            "--kwarg",
            "hidden_size=64",
            "--backend",
            "cpu-check",
            "--no-cache",
            "--workdir",
            f"{tmp}/jobs",
        ]
        _timed([sys.executable, "-c", BARE, f"{tmp}/warm.pt"])
        _timed(cmd)
        for i in range(ROUNDS):
            bare.append(_timed([sys.executable, "-c", BARE, f"{tmp}/bare-{i}.pt"]))
            job.append(_timed(cmd))
    b, j = statistics.median(bare), statistics.median(job)
    fraction = (j - b) / b
    return [
        f"Module compile (tests/data/modules/mlp.py:make_mlp, x f32[8,64], cpu-check), {ROUNDS} alternated rounds "
        "after a warm-up (median; min in brackets).",
        "",
        "| run | wall time |",
        "|---|---|",
        f"| bare script: load the file, build, wrap, torch.jit.trace + save, `os._exit` | {b:.3f} s ({min(bare):.3f} s) |",
        f"| `neffbench compile mlp.py:make_mlp --input x:f32[8,64] --backend cpu-check` | {j:.3f} s ({min(job):.3f} s) |",
        f"| overhead | {j - b:+.3f} s ({fraction:+.1%}) |",
        "",
        f"Target: within {TARGET_FRACTION:.0%}: {'met' if fraction <= TARGET_FRACTION else 'NOT met'}. The job also "
        "runs the eager reference, pre-flight's graph checks, verification on two input sets and a float64 run, "
        "and writes reproduce.py and the records.",
    ]


def _round_trip() -> list[str]:
    from PySide6.QtCore import QCoreApplication, QEventLoop

    from neffbench.probe.client import WarmProbe
    from neffbench.spec import loads_toml, to_dict
    from tests.bench.bench_gui import _app, _StallMeter
    from tests.test_module_kernel import BERT_TOML

    app = _app()
    spec = to_dict(loads_toml(BERT_TOML))
    probe = WarmProbe()
    t0 = time.perf_counter()
    probe.start()
    probe.ask("resolve", {"entry": "transformers:BertModel"})
    probe.ask("check", {"spec": spec})
    cold = time.perf_counter() - t0
    from superqt.utils import create_worker

    times, stalls = [], []
    for _ in range(ROUND_TRIPS):
        done: list[float] = []
        meter = _StallMeter()
        meter.start()
        start = time.perf_counter()

        def trip() -> None:
            probe.ask("resolve", {"entry": "transformers:BertModel"})
            probe.ask("check", {"spec": spec})

        worker = create_worker(trip, _connect={"finished": lambda done=done: done.append(time.perf_counter())})
        while not done:
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 20)
        times.append(done[0] - start)
        stalls.append(meter.stop())
        del worker
    probe.close()
    QCoreApplication.processEvents()
    t, s = statistics.median(times), max(stalls)
    ok = t < TARGET_ROUND_TRIP_S and s <= TARGET_STALL_MS
    return [
        "Resolve + CPU check of a tiny BERT (2 layers, hidden 32) through the warm probe, run from a worker "
        f"thread of a Qt app as the window runs it; {ROUND_TRIPS} round trips after the first.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| first round trip (starts the probe: torch and transformers imports) | {cold:.2f} s |",
        f"| warm round trip, median (max) | {t:.3f} s ({max(times):.3f} s) |",
        f"| longest GUI-thread stall meanwhile | {s:.1f} ms |",
        "",
        f"Targets: under {TARGET_ROUND_TRIP_S:g} s warm, no stall over {TARGET_STALL_MS:g} ms: "
        f"{'met' if ok else 'NOT met'}.",
    ]


def run() -> list[str]:
    return [*_round_trip(), "", *_compile_overhead()]
