"""A tapped job's outputs sorted out: which of its NEFF's outputs are the module's own and which are taps, and the
references each tap is compared with (``reference.npz`` in the job's dtype, ``reference64.npz`` in float64)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.runs import arrays
from neffbench.taps.select import Tap
from neffbench.views.job import JobView
from neffbench.words import plural


def _taps_of(tapped: JobView) -> tuple[list[Tap], dict[str, Any]]:
    block = tapped.taps
    if not isinstance(block.get("taps"), list):
        raise ValueError(f"{tapped.job_id}'s record lists no taps: it is not a compare's tapped job")
    taps = [Tap.from_dict(t) for t in block["taps"]]
    return taps, block


@dataclass
class Found:
    taps: list[Tap]
    device_taps: dict[str, Any]
    eager_taps: dict[str, Any]
    float64: dict[str, Any] | str
    device_own: list[Any]  # the module's own outputs of the tapped run, to compare with the job's
    dtype: str
    depth: int | None
    notes: list[str]
    tap_outputs: list[str]  # each tap's output name in the NEFF (outputK) and in reference.npz

    @classmethod
    def of(cls, tapped_dir: Path, tapped: JobView, device: dict[str, Any], dtype: str) -> Found:
        taps, block = _taps_of(tapped)
        eager = arrays.load(tapped_dir / arrays.REFERENCE_NAME)
        names = list(eager.arrays)
        own = len(names) - len(taps)
        if own < 0:
            raise ValueError(
                f"{tapped_dir}/reference.npz holds {len(names)} outputs, fewer than its {plural(len(taps), 'tap')}"
            )
        eager_taps = {t.name: arrays.to_tensor(eager.arrays[n], eager.dtypes[n]) for t, n in zip(taps, names[own:])}
        device_taps = {t.name: device[n] for t, n in zip(taps, names[own:]) if n in device}
        float64: dict[str, Any] | str
        if (tapped_dir / arrays.FLOAT64_REFERENCE_NAME).is_file():
            saved = arrays.load(tapped_dir / arrays.FLOAT64_REFERENCE_NAME)
            float64 = {n: arrays.to_tensor(a, saved.dtypes[n]) for n, a in saved.arrays.items()}
        else:
            float64 = str(block.get("float64") or "the tapped job kept no float64 reference")
        return cls(
            taps,
            device_taps,
            eager_taps,
            float64,
            [device[n] for n in names[:own] if n in device],
            dtype,
            block.get("depth") if isinstance(block.get("depth"), int) else None,
            [str(n) for n in block.get("notes") or []],
            names[own:],
        )


def autocast(spec: Any) -> tuple[float, float] | None:
    """The tolerance against eager of a compile that changes the arithmetic (``--auto-cast``), else None: each
    tap's dtype then sets its own."""
    from neffbench.backends.verify import tolerance_for

    if getattr(spec.compiler, "auto_cast", "none") == "none":
        return None
    atol, rtol, _ = tolerance_for(spec)
    return atol, rtol


def no_device_output(found: Found, tapped: JobView, runtime: str) -> str | None:
    """Why the run gave no output of any tap (None when it gave some): a job whose NEFF runs on a NeuronCore only,
    run on this host's CPU (which runs the job's module eagerly, untapped), or a runtime that returned nothing."""
    from neffbench.backends.registry import makes_no_neff

    if not found.taps or found.device_taps:
        return None
    if runtime == "cpu" and not makes_no_neff(tapped.backend):
        return (
            f"no device output on this host (the {tapped.backend} job's NEFF runs on a NeuronCore only; the cpu "
            "runtime ran its module eagerly, which is the eager reference itself)"
        )
    return f"no device output: the {runtime} runtime returned no output of the taps"


def notes(job: JobView, tapped: JobView, found: Found, own_error: str | None) -> list[str]:
    """What the reader of a compare should know before its figures: how the taps were chosen, whether the tapped
    build is the job's (same weights), and whether the job itself could be run."""
    out = list(found.notes)
    mine, theirs = (job.weights or {}).get("sha256"), (tapped.weights or {}).get("sha256")
    if mine and theirs and mine != theirs:
        out.append(
            f"the tapped build's weights ({theirs[:12]}) are not the job's ({mine[:12]}): its figures describe "
            "another module (a factory that does not seed its weights, or files changed since the job)"
        )
    if own_error:
        out.append(f"whether the taps changed the result is not known: {own_error}")
    return out
