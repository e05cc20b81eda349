"""The part of ``reproduce.py`` that checks its own build against the job's (no torch here: the text only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.kernels.script_template import fill
from neffbench.kernels.source import module_source

TEMPLATES = Path(__file__).with_name("templates")


def script_source(recorded: dict[str, Any] | None) -> str:
    """The part of ``reproduce.py`` that checks its build against the job's: this module verbatim, the job's
    digest, and ``same_weights(module)``."""
    body = module_source(Path(__file__).with_name("weights.py"))
    return fill(TEMPLATES / "same_weights.py", weights_module=body.strip(), recorded=dict(recorded or {}))


def difference_sentence(now: dict[str, Any], then: dict[str, Any]) -> str:
    """``its weights digest is ...`` for two recorded digests (torch-free: the records' words)."""
    return (
        f"its weights digest is {str(now.get('sha256'))[:12]} ({now.get('tensors')} tensors, {now.get('bytes')} "
        f"bytes), the other's {str(then.get('sha256'))[:12]} ({then.get('tensors')} tensors, {then.get('bytes')} "
        "bytes)"
    )
