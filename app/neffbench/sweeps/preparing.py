"""Before a sweep of the user's code runs anything: each point's build checked in a probe (the entry resolves,
nested arguments name what they set, the inputs bind) and what it reads found, once per distinct build."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from neffbench.jobs import prepare
from neffbench.kernels import registry
from neffbench.spec import Problem
from neffbench.sweeps.grid import SweepPlan


def _build_key(spec: Any) -> str:
    """Points with equal keys make the same module from the same inputs: one probe answers for all of them."""
    return json.dumps(registry.for_spec(spec).prepare_key(spec), sort_keys=True, default=str)


def prepare_points(plan: SweepPlan, workdir: Any, ask: prepare.Ask) -> int:
    """Give each valid point of a kernel that runs user code its ``prepared``; a point whose build cannot work
    becomes invalid with the probe's sentence. Returns how many distinct builds were probed or found."""
    found: dict[str, prepare.Prepared] = {}
    for i, point in enumerate(plan.points):
        if not point.valid or not prepare.needed(point.spec):
            continue
        key = _build_key(point.spec)
        if key not in found:
            found[key] = prepare.prepare(point.spec, workdir, ask)
        prepared = found[key]
        if prepared.problems:
            problems = (*point.problems, *(Problem("module", p) for p in prepared.problems))
            plan.points[i] = dataclasses.replace(point, spec=None, problems=problems)
        else:
            plan.points[i] = dataclasses.replace(point, prepared=prepared)
    return len(found)
