"""The compile worker's part of a compare: the job's module turned into its tapped variant before it is traced.

A tapped job is an ordinary job whose directory holds ``taps.json`` (``{"patterns": [...], "depth": N|null}``,
written by ``neffbench.numerics``). Here the taps are chosen on the module the kernel built (same weights, same
seeded inputs as the job it taps), the module is wrapped so that each tap's output is an extra output, and a
float64 run of the untapped module gives every tap's float64 reference (``reference64.npz``), where the module
allows one. Everything after this (reference, trace, compile, verify, ``reference.npz``) is the job's usual
sequence, so the eager reference of every tap comes with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neffbench.backends.base import JobFailure
from neffbench.jobs.protocol import TAPS_REQUEST as REQUEST_NAME


def requested(job_dir: Path) -> dict[str, Any] | None:
    """The taps a job was asked for, or None for an ordinary job."""
    path = job_dir / REQUEST_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def apply(job_dir: Path, built: Any, out: Any) -> Any:
    """For a tapped job: choose the taps, save their float64 reference, make ``built`` the tapped variant (in
    place) and return its eager outputs (the module's own, then each tap's), the job's reference. None for an
    ordinary job. Called once the untapped module's reference is taken, so every check of it stays as it was."""
    request = requested(job_dir)
    if request is None:
        return None
    import torch

    from neffbench.backends.eager import copies
    from neffbench.runs import arrays
    from neffbench.taps import compare, select
    from neffbench.taps.wrapper import Tapped

    try:
        plan = select.plan(
            built.module, copies(built.inputs), tuple(request.get("patterns") or ()), request.get("depth")
        )
    except select.TapSelectionError as exc:
        raise JobFailure(str(exc)) from exc
    if not plan.taps:
        raise JobFailure("no module to tap: " + " ".join(plan.notes or ["the selection is empty."]))
    float64 = compare.float64_reference(built.module, copies(built.inputs), plan.taps)
    if isinstance(float64, dict):
        saved = arrays.Arrays()
        for tap in plan.taps:
            saved.add(tap.name, *arrays.from_tensor(float64[tap.name]), role=tap.module)
        arrays.save(job_dir / arrays.FLOAT64_REFERENCE_NAME, saved)
    out.event(
        {
            "type": "taps",
            "taps": [t.to_dict() for t in plan.taps],
            "depth": plan.depth,
            "notes": plan.notes,
            "float64": None if isinstance(float64, dict) else float64,
        }
    )
    for note in plan.notes:
        out.line(f"neffbench: {note}")
    out.line(f"neffbench: tapped {len(plan.taps)} module(s): each one's output is an extra output of the NEFF")
    script = job_dir / "reproduce.py"
    if script.is_file():  # written for the untapped module before the taps were chosen: say so in it
        with script.open("a", encoding="utf-8") as fh:
            fh.write(
                f"\n# This job is the tapped variant a compare made (neffbench compare): its NEFF also returns the output "
                f"of each of {len(plan.taps)} tapped\n# module(s), listed under 'taps' in job.json. This script "
                "rebuilds the module without its taps.\n"
            )
    built.module = Tapped(built.module, plan.taps)
    if built.output_names:  # roles stay aligned only when the module's own outputs are named
        built.output_names = (*built.output_names, *(t.name for t in plan.taps))
    with torch.no_grad():
        return built.module(*copies(built.inputs))
