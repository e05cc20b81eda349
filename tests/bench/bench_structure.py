"""The structure of a 32-layer Llama-shaped model built from a config: computing it against one eager forward plus
one trace (target: within 2x), and the Structure tab opening it, expanding it, drawing a layer and searching it
(target: no GUI-thread stall over 50 ms). Figures for the README, not pass/fail tests."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
import warnings
from pathlib import Path

ROUNDS = 3
LLAMA = {
    "name": "llama32",
    "kernel": "module",
    "module": {
        "entry": "transformers:LlamaForCausalLM",
        "kwargs": {
            "config": {
                "entry": "transformers:LlamaConfig",
                "kwargs": {
                    "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 32,
                    "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
                },
            }
        },
        "constants": {"return_dict": False, "use_cache": False},
    },
    "inputs": {"input_ids": "i64[1,16] randint(0, 256)", "attention_mask": "i64[1,16] ones"},
}  # fmt: skip


def _built():
    from neffbench.kernels import registry
    from neffbench.spec import from_dict

    spec = from_dict(LLAMA)
    return registry.for_spec(spec).build(spec)


def _compute() -> tuple[list[str], dict]:
    import torch

    from neffbench.backends.eager import copies
    from neffbench.backends.tracing import cpu_check_trace
    from neffbench.structure.capture import capture

    built = _built()
    baseline, alone, reused = [], [], []
    document: dict = {}
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        with torch.no_grad():
            built.module(*copies(built.inputs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced, _ = cpu_check_trace(built.module, copies(built.inputs))
        baseline.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        document = capture(built, how="bench")
        alone.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        capture(built, traced, how="bench")  # as the compile worker does: its CPU trace is reused
        reused.append(time.perf_counter() - t0)
    base, mine, worker = (statistics.median(x) for x in (baseline, alone, reused))
    lines = [
        f"A 32-layer Llama-shaped model from a config ({len(document['nodes'])} modules, {len(document['ops']):,} "
        f"traced operations), median of {ROUNDS}. Target: the structure within 2x of one eager forward plus one trace.",
        "",
        "| measure | seconds |",
        "| --- | --- |",
        f"| one eager forward + one `torch.jit.trace` (baseline) | {base:.3f} |",
        f"| the structure, tracing for itself (`neffbench structure` on an old job) | {mine:.3f} ({mine / base:.2f}x) |",
        f"| the structure in the compile worker (its CPU trace reused) | {worker:.3f} ({worker / base:.2f}x) |",
        f"| structure.json | {len(json.dumps(document, separators=(',', ':'))) / 1024:.0f} KiB |",
    ]
    return lines, document


def _window(document: dict) -> list[str]:
    """The Structure tab on that structure: open, expand a layer, draw a layer's flow, search; the longest stall.

    Python's garbage collector runs as in the window: only on the GUI thread, from a timer (``MainThreadGC``, as
    ``launch`` starts it), with what start-up made frozen (as the window does once torch has loaded; here torch,
    transformers and the models built above). Left automatic, a full collection over those 400,000 objects (about
    200 ms of CPU) falls on whichever thread allocates next, the layout's thread holding Python's lock through it:
    a stall of the GUI thread that the window does not have."""
    import gc

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from neffbench.gui.shell.gc_guard import MainThreadGC
    from neffbench.gui.structure.panel import StructurePanel
    from neffbench.gui.widgets import theme
    from neffbench.probe.client import close_shared
    from tests.bench.bench_gui import _StallMeter

    class Meter(_StallMeter):
        """The longest stall, and the GUI thread's own CPU time in it: what the machine's other load does not
        lengthen (on a busy machine the wall-clock stall is a multiple of it)."""

        def start(self) -> None:
            self.cpu, self._cpu_last = 0.0, time.thread_time()
            super().start()

        def _on_timer_timeout(self) -> None:
            now = time.thread_time()
            self.cpu = max(self.cpu, now - self._cpu_last)
            self._cpu_last = now
            super()._on_timer_timeout()

    app = QApplication.instance() or QApplication(["bench"])
    theme.apply(app)
    collector = MainThreadGC(parent=app)
    gc.freeze()
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "llama32-20260101T000000Z-0"
        job.mkdir()
        (job / "job.json").write_text(json.dumps({"schema_version": 1, "job_id": job.name, "outcome": "succeeded"}))
        (job / "structure.json").write_text(json.dumps(document, separators=(",", ":")))
        panel = StructurePanel()
        panel.resize(1920, 1000)
        panel.show()
        rows = []

        def until(signal, start) -> float:
            done: list[float] = []
            signal.connect(lambda *_: done.append(time.perf_counter()))
            t0 = time.perf_counter()
            start()
            while not done:
                app.processEvents()
                time.sleep(0.001)
            return done[0] - t0

        for label, signal, action in (
            ("open the job (read, tree shown, the root's flow drawn)", panel.drawn, lambda: panel.set_job(str(job))),
            ("pick model.layers.0 (its flow laid out and drawn)", panel.drawn, lambda: panel.select_path("model.layers.0", quiet=False)),
            ("pick model (its 32 layers one run: 7 boxes)", panel.drawn, lambda: panel.select_path("model", quiet=False)),
            ("open the run (33 boxes: the layers' chain)", panel.drawn, lambda: panel.flow_view.run_clicked.emit("model.layers.0")),
        ):  # fmt: skip
            meter = Meter()
            meter.start()
            elapsed = until(signal, action)
            rows.append((label, elapsed * 1e3, meter.stop(), meter.cpu * 1e3))
        for label, action in (
            ("expand every layer (expandAll)", panel.tree.expandAll),
            ("search 'mlp' (filter and expand the matches)", lambda: panel.search.setText("mlp")),
        ):
            meter = Meter()
            meter.start()
            t0 = time.perf_counter()
            action()
            app.processEvents()
            rows.append((label, (time.perf_counter() - t0) * 1e3, meter.stop(), meter.cpu * 1e3))
        panel.close()
    close_shared()  # the layout child
    gc.unfreeze()
    collector.stop()
    return [
        "",
        "The Structure tab at 1920x1000 (offscreen), Python's collector on the GUI thread and start-up's objects "
        "frozen, as in the window. Target: no GUI-thread stall over 50 ms.",
        "",
        f"Load average while measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.",
        "",
        "| action | ms to done | longest GUI-thread stall, ms | its GUI-thread CPU, ms |",
        "| --- | --- | --- | --- |",
        *(f"| {label} | {total:.0f} | {stall:.1f} | {cpu:.1f} |" for label, total, stall, cpu in rows),
    ]


def run() -> list[str]:
    lines, document = _compute()
    return lines + _window(document)
