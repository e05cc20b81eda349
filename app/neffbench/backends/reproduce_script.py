"""What every backend's ``reproduce.py`` shares: the job it rebuilds, in its docstring's words, and the code of the
kernel and of the module's check (``templates/kernel_and_module.py``). Each backend's own part is its template."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neffbench
from neffbench.backends.weights_source import script_source
from neffbench.kernels import registry
from neffbench.kernels.api import Built
from neffbench.kernels.bucket_words import bucket_label
from neffbench.kernels.script_template import fill
from neffbench.spec import spec_hash

TEMPLATES = Path(__file__).with_name("templates")


def job_values(spec: Any, *, job_id: str, built: Built, weights: dict[str, Any] | None) -> dict[str, Any]:
    """The values every backend's template takes: the job's heading and the kernel and module code."""
    kernel = registry.for_spec(spec)
    kernel_and_module = fill(
        TEMPLATES / "kernel_and_module.py",
        title=kernel.title,
        version=neffbench.__version__,
        kernel_source=kernel.reproduce_source(spec, built).strip(),
        module_source=script_source(weights).strip(),
    )
    return {
        "job_id": job_id,
        "name": spec.name,
        "bucket": bucket_label(kernel.buckets(spec)[0]),
        "hash8": spec_hash(spec)[:8],
        "needs": kernel.reproduce_needs(spec),
        "kernel_and_module": kernel_and_module.removesuffix("\n"),
    }
