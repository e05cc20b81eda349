"""The compile worker's part of a profiled variant: the framework's debug names, set before anything compiles.

Neuron Explorer maps device time to the model's layers only for a NEFF compiled with ``XLA_IR_DEBUG=1``,
``XLA_HLO_DEBUG=1`` and ``NEURON_FRAMEWORK_DEBUG=1`` set before compiling (aws-neuron-sdk
``tools/neuron-explorer/how-to-profile-workload.rst``). A job whose directory holds ``profiled.json`` (written by
``neffbench.structure.profiled``) is such a variant: the same spec, another NEFF, cached apart.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from neffbench.jobs.protocol import DEBUG_NAMES_ENV, PROFILED_REQUEST


def requested(job_dir: Path) -> dict[str, Any] | None:
    """What a profiled variant was asked for (``{"of": JOB}``), or None for an ordinary job."""
    path = job_dir / PROFILED_REQUEST
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def apply(job_dir: Path, out: Any) -> None:
    """For a profiled variant: the debug names on, for this process and the compiler it starts."""
    if requested(job_dir) is None:
        return
    os.environ.update(DEBUG_NAMES_ENV)
    out.line(
        "neffbench: compiling with the framework's debug names (" + " ".join(f"{k}=1" for k in DEBUG_NAMES_ENV) + ")"
    )
