"""A spec's preview as the front ends show it: the kernel's own (RoPE's tables and rotation, RMSNorm's row
norms), or the sentence saying why there is none. Qt-free: the window computes it on a worker thread, or,
while its own torch loads, asks the warm probe for it (``python -m neffbench.workers.probe preview``).
"""

from __future__ import annotations

from typing import Any

from neffbench.kernels import registry
from neffbench.schema.problems import problem_lines
from neffbench.spec.validate import errors


def compute(spec: Any, bucket: int | None = None) -> Any:
    """The kernel's preview, ``None`` when it has none of its own, or the reason it cannot be shown (returned,
    not raised: the window shows it in place of the plots)."""
    # The whole spec first (name, workdir, compiler): a kernel's preview refuses errors in its own fields only.
    problems = errors(spec)
    if problems:
        return problem_lines(problems)
    kernel = registry.for_spec(spec)
    chosen = kernel.pick_bucket(spec, bucket) if bucket is not None else None
    try:
        return kernel.preview(spec, chosen)
    except ValueError as exc:  # the kernel's own refusals
        return str(exc)


def preload() -> None:
    """Import the default kernel's preview code now, so that the first compute does not pay for it."""
    registry.get(registry.DEFAULT).preview_preload()
