"""``reproduce.py``: a standalone script (torch and torch_neuronx only) that rebuilds a job's NEFF with the same
values; each backend writes its own (Backend.reproduce_script), this module puts it in the job directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.backends import registry
from neffbench.backends.base import Backend
from neffbench.kernels.api import Built
from neffbench.procs import write_text as write_text_atomic

SCRIPT_NAME = "reproduce.py"


def _backend(backend: Backend | str | None) -> type[Backend] | Backend:
    # A job whose backend is not known yet (or a caller that does not say) gets torch_neuronx.trace's script.
    if isinstance(backend, Backend):
        return backend
    return registry.recorded(backend) or registry.REGISTRY["neuron"]


def render(
    spec: Any,
    *,
    job_id: str,
    backend: Backend | str | None,
    built: Built,
    weights: dict[str, Any] | None = None,
) -> str:
    """The script's text for a single-bucket spec.

    ``built`` is what the job traced (the module kernel's wrapper needs it); the backend writes the script.
    """
    return _backend(backend).reproduce_script(spec, job_id=job_id, built=built, weights=weights)


def write(
    job_dir: Path,
    spec: Any,
    *,
    backend: Backend | str | None,
    built: Built,
    weights: dict[str, Any] | None = None,
) -> Path:
    path = Path(job_dir) / SCRIPT_NAME
    text = render(spec, job_id=Path(job_dir).name, backend=backend, built=built, weights=weights)
    write_text_atomic(path, text)
    path.chmod(0o755)
    return path
