"""What pre-flight costs: ``neffbench check``'s probe (build, the watched eager call, the CPU trace, its graph checks and
the trace's check on other inputs) on a tiny BERT and on the 12-layer module of the compare bench, in this process.

The checks of what tracing drops add to one build: the version counters and a TorchFunctionMode around the eager
call the check makes anyway, and one more eager call and one more traced call on other inputs (``generalises``).
The table shows each part, so the share of the new checks is read off, not guessed; nothing is rebuilt.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

ROUNDS = 5


def _specs(folder: Path) -> dict[str, object]:
    from neffbench.spec import load, loads_toml
    from tests.bench.bench_compare import MODEL, SPEC
    from tests.test_module_kernel import BERT_TOML

    (folder / "model.py").write_text(MODEL)
    (folder / "tiny12.toml").write_text(SPEC)
    return {
        "tiny BERT (2 layers, hidden 32)": loads_toml(BERT_TOML),
        "12-layer MLP (width 64)": load(folder / "tiny12.toml"),
    }


def _parts(spec) -> dict[str, float]:
    """Each step of the probe's check on ``spec`` timed alone, in the order the check runs them."""
    import torch

    from neffbench.backends import eager
    from neffbench.backends.tracing import cpu_check_trace
    from neffbench.backends.verify import generalises
    from neffbench.jobs.preflight import Report, analyze_graph
    from neffbench.kernels import registry

    kernel = registry.for_spec(spec)
    spec = kernel.for_bucket(spec, kernel.buckets(spec)[0])
    out: dict[str, float] = {}
    t = time.perf_counter()
    built = kernel.build(spec)
    out["build (with its own eager call)"] = time.perf_counter() - t
    t = time.perf_counter()
    with torch.no_grad():
        built.module(*eager.copies(built.inputs))
    out["eager call, unwatched"] = time.perf_counter() - t
    t = time.perf_counter()
    eager.call(built)
    out["eager call, watched (effects, complex numbers)"] = time.perf_counter() - t
    t = time.perf_counter()
    traced, warnings = cpu_check_trace(built.module, eager.copies(built.inputs))
    analyze_graph(Report(), traced, built.input_names, built.output_names)
    out["CPU trace and graph checks"] = time.perf_counter() - t
    t = time.perf_counter()
    generalises(Report(), traced, built, spec, warnings)
    out["the trace on other inputs (one eager, one traced call)"] = time.perf_counter() - t
    return out


def run() -> list[str]:
    from neffbench.workers.probe import check

    lines = [
        f"`neffbench check`'s probe in this process, median of {ROUNDS} runs after a warm-up (the user's file read "
        "afresh each time, as the warm probe does).",
        "",
        "| module | whole check | build | eager, unwatched | eager, watched | trace + graph checks | on other inputs |",
        "|---|---|---|---|---|---|---|",
    ]
    from neffbench.spec import to_dict

    with tempfile.TemporaryDirectory() as tmp:
        import os

        here = os.getcwd()
        os.chdir(tmp)
        try:
            for name, spec in _specs(Path(tmp)).items():
                request = {"spec": to_dict(spec)}
                check(request)  # imports and first-call costs out of the figures
                whole = []
                for _ in range(ROUNDS):
                    t = time.perf_counter()
                    check(request)
                    whole.append(time.perf_counter() - t)
                parts = [_parts(spec) for _ in range(ROUNDS)]
                cells = [statistics.median(p[k] for p in parts) * 1e3 for k in parts[0]]
                lines.append(
                    f"| {name} | {statistics.median(whole) * 1e3:.0f} ms | "
                    + " | ".join(f"{c:.1f} ms" for c in cells)
                    + " |"
                )
        finally:
            os.chdir(here)
    lines += [
        "",
        "The checks of what tracing drops cost the difference between the watched and the unwatched eager call, and "
        "the last column: one eager and one traced call per bucket, no rebuild.",
    ]
    return lines
