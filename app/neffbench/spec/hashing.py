"""The spec's content hash: what determines the NEFF, by the spec's kernel, as a stable digest."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from neffbench.kernels import registry


def neff_relevant(spec: Any) -> dict[str, Any]:
    """The values that can change the compiled NEFF, normalised by the spec's kernel so equivalent specs agree."""
    return registry.for_spec(spec).neff_relevant(spec)


def spec_hash(spec: Any, sources: str | None = None) -> str:
    """Stable hex digest of what determines the NEFF (names, workdir, seeds and timeouts excluded).

    ``sources``: the digest of the source closure a build of the spec reads (usercode.closure), for kernels that run
    the user's code: their NEFF depends on every file the module was built from, not only on the spec's text.
    """
    relevant = neff_relevant(spec)
    if sources is not None:
        relevant = {**relevant, "sources": sources}
    canonical = json.dumps(relevant, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
