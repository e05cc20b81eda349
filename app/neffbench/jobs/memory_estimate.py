"""How much memory one compile may take at its peak: the user's figure, the kernel's own estimate, or one by backend and target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neffbench.backends import registry as backends
from neffbench.kernels import registry

GiB = 2**30
# A worker before its job: Python, torch and the kernel's imports, plus the eager reference and the
# trace of a small graph. A seed cpu-check job peaks near 0.25 GiB; the margin covers larger graphs.
WORKER_BYTES = 1 * GiB
# neuronx-cc on top of the worker, for a graph the size of one kernel. These are deliberately generous
# guesses (the compiler's peak grows with the graph and the target's core count, and an
# underestimate is what the OOM killer punishes); a user who knows better passes --memory-per-job.
COMPILER_BYTES = {"inf2": 3 * GiB, "trn1": 3 * GiB, "trn1n": 3 * GiB, "trn2": 4 * GiB, "trn3": 4 * GiB}
DEFAULT_COMPILER_BYTES = 4 * GiB
# The worker holds the example inputs, the eager outputs, a second input set, a float64 run and the
# traced module's own copies: several times the bytes of what the NEFF takes and returns, for kernels
# that count their data (``Kernel.compile_data_bytes``).
TENSOR_FACTOR = 8


@dataclass(frozen=True)
class Estimate:
    """Bytes one compile may take at its peak, and where the figure comes from."""

    bytes: int
    source: str  # "user" (--memory-per-job), "kernel" (from the kernel's compile_data_bytes) or "default"

    @property
    def origin(self) -> str:
        return {"user": "as given", "kernel": "the kernel's estimate"}.get(self.source, "default estimate")

    def text(self) -> str:
        return f"{self.bytes / GiB:.1f} GiB ({self.origin})"


def baseline(spec: Any, backend: str) -> int:
    """The worker and, for a Neuron compile, the compiler for a graph of one small kernel; what a kernel's own
    estimate adds its data to. Computed without importing torch (a sweep's parent never needs it)."""
    total = WORKER_BYTES
    if backends.get(backend).runs_compiler:
        total += COMPILER_BYTES.get(spec.compiler.target, DEFAULT_COMPILER_BYTES)
    return total


def estimate(spec: Any, backend: str, *, override_bytes: int | None = None) -> Estimate:
    """The peak memory of compiling single-bucket ``spec`` with ``backend`` (``neuron`` or ``cpu-check``)."""
    if override_bytes is not None:
        return Estimate(int(override_bytes), "user")
    data = registry.for_spec(spec).compile_data_bytes(spec)
    if data is not None:
        return Estimate(baseline(spec, backend) + TENSOR_FACTOR * int(data), "kernel")
    return Estimate(baseline(spec, backend), "default")
