"""The compile worker's ``structure`` stage: the module's tree, shapes, FLOPs and traced operations, kept in
``JOB/structure.json`` for ``neffbench structure`` and the window. Reading it never fails the job: a module whose
structure cannot be read compiles all the same, and the log says why it has none."""

from __future__ import annotations

import time
from typing import Any

HOW = "the compile worker, from the job's own build"


def run(job: Any, built: Any) -> None:
    from neffbench.structure.capture import capture, write
    from neffbench.usercode.errors import describe

    t0 = time.perf_counter()
    try:
        document = capture(built, job.cpu_traced, how=HOW, weights=job.weights.get("sha256"))
        write(job.job_dir, document)
    except Exception as exc:  # noqa: BLE001 - the user's module may refuse a second call any way it likes
        job.out.line(f"neffbench: the module's structure could not be read ({describe(exc)}); the job goes on")
        return
    seconds = time.perf_counter() - t0
    job.metric("structure_s", round(seconds, 4), "s")
    nodes, ops = len(document["nodes"]), len(document["ops"])
    flops = document["nodes"][0]["flops"]
    job.out.line(
        f"neffbench: structure: {nodes} module(s), {ops} traced operation(s), {flops:,} FLOPs "
        f"in {seconds:.2f} s (structure.json)"
    )
