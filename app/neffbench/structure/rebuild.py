"""The structure of a job that has none (compiled before structures existed): its module built again from the job's
spec in a probe child, checked to be the module compiled (the weights digest), captured and kept in the job.

:func:`compute` asks the probe (``python -m neffbench.workers.probe structure``); :func:`answer` is the probe's side.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from neffbench.jobs.records import RECORD_NAME
from neffbench.probe.client import ProbeError, ask
from neffbench.structure import document, layers
from neffbench.structure.document import Structure, StructureError
from neffbench.views.job import RecordError
from neffbench.views.job_file import read_job

HOW = "computed later from the job's spec"
TIMEOUT_S = 600.0


def variant_of(job_dir: Path) -> str | None:
    """The job a compare's tapped job or a profiled variant belongs to (its structure is that job's), else None."""
    try:
        job = read_job(job_dir / RECORD_NAME)
    except RecordError:
        return None
    return job.variant_of


def compute(job_dir: str | Path, *, timeout: float = TIMEOUT_S) -> Structure:
    """Build the job's module again from its spec (in a probe child), keep its structure, and return it."""
    folder = Path(job_dir).resolve()
    try:
        report = ask("structure", {"job_dir": str(folder)}, timeout=timeout)
    except ProbeError as exc:
        raise StructureError(str(exc)) from None
    if not report.get("ok"):
        raise StructureError(str(report.get("error") or "the structure could not be computed"))
    found = document.load(folder)
    if found is None:
        raise StructureError(f"the probe kept no {document.FILE_NAME} in {folder}")
    return found


def laid(job_dir: str | Path, say: Callable[[str], None] | None = None) -> layers.Laid:
    """The job's structure with its error and time laid on it, computed first for a job that has none (``say``
    hears that it is); StructureError when it cannot be had."""
    folder = Path(job_dir)
    job = read_job(folder / RECORD_NAME)
    structure = document.load(folder)
    if structure is None:
        of = variant_of(folder)
        if of:
            raise StructureError(f"{folder.name} is a variant of {of}, whose structure is its own: see that job")
        if say is not None:
            say(
                f"neffbench: {folder.name} has no structure yet (compiled before structures were kept): computing it "
                "from the job's spec"
            )
        structure = compute(folder)
    found = layers.lay(folder, structure, job)
    assert found is not None
    return found


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """(torch, in the probe) The job's module from its spec, its weights checked, its structure written."""
    from neffbench.backends.weights import weights_digest
    from neffbench.kernels import registry
    from neffbench.kernels.api import KernelError
    from neffbench.spec import SpecError, from_dict
    from neffbench.structure.capture import capture, write

    job_dir = Path(request["job_dir"])
    job = read_job(job_dir / RECORD_NAME)
    if job.spec is None:
        return {"ok": False, "error": f"{job_dir / RECORD_NAME} records no spec to build the module from"}
    try:
        spec = from_dict(job.spec)
        built = registry.for_spec(spec).build(spec)
    except (SpecError, KernelError) as exc:
        return {"ok": False, "error": f"the job's module cannot be built again: {exc}"}
    weights = weights_digest(built.module)
    recorded = job.weights.get("sha256")
    if recorded and weights.get("sha256") != recorded:
        return {
            "ok": False,
            "error": (
                f"the module built now differs from the one compiled: its weights digest is "
                f"{str(weights.get('sha256'))[:12]}, the job's {str(recorded)[:12]} (a source file or the seed changed), "
                "so its structure would describe another module"
            ),
        }
    write(job_dir, capture(built, how=HOW, weights=weights.get("sha256")))
    return {"ok": True, "path": str(job_dir / document.FILE_NAME)}
