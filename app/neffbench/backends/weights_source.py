"""The part of ``reproduce.py`` that checks its own build against the job's (no torch here: the text only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.kernels.source import module_source


def script_source(recorded: dict[str, Any] | None) -> str:
    """The part of ``reproduce.py`` that checks its build against the job's: this module verbatim, the job's
    digest, and ``same_weights(module)``."""
    body = module_source(Path(__file__).with_name("weights.py"))
    return f'''{body.strip()}


# The digest of the module the job compiled; a build that makes another module makes another NEFF.
RECORDED_WEIGHTS = {dict(recorded or {})!r}


def same_weights(module) -> bool:
    """Whether this build made the module the job compiled; says so plainly when it did not."""
    difference = weights_difference(weights_digest(module), RECORDED_WEIGHTS)
    if not difference:
        return True
    print(f"reproduce.py: {{difference}}. The NEFF this script would make is not the job's: check the files "
          "and library versions the job lists (job.json, sources), or rerun with --anyway to build it all the "
          "same.", file=sys.stderr)
    return ANYWAY
'''


def difference_sentence(now: dict[str, Any], then: dict[str, Any]) -> str:
    """``its weights digest is ...`` for two recorded digests (torch-free: the records' words)."""
    return (
        f"its weights digest is {str(now.get('sha256'))[:12]} ({now.get('tensors')} tensors, {now.get('bytes')} "
        f"bytes), the other's {str(then.get('sha256'))[:12]} ({then.get('tensors')} tensors, {then.get('bytes')} "
        "bytes)"
    )
