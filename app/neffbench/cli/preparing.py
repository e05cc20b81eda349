"""Before ``compile`` or ``sweep`` starts a job of the user's code: what its build reads, and the problems only
running the code can find, printed so that nothing is started for an entry that cannot work."""

from __future__ import annotations

import sys
from typing import Any

from neffbench.jobs.prepare import Ask, Prepared, prepare
from neffbench.usercode.tracebacks import user_frames


def prepared_or_refused(source: str, spec: Any, ask: Ask | None = None) -> Prepared | None:
    """The build's closure (from the workdir's records or a probe child); None, with the problem printed to
    stderr, when the entry does not resolve or the inputs do not bind (the caller exits 2)."""
    if ask is None:
        from neffbench.probe.client import ask as ask_once

        ask = ask_once
    prepared = prepare(spec, spec.workdir, ask)
    if not prepared.problems:
        return prepared
    for problem in prepared.problems:
        print(f"error: pre-flight: {problem}", file=sys.stderr)
    frames = user_frames(prepared.traceback) if prepared.traceback else ""
    if 'File "' in frames:
        print("Where in your code (frames of the workbench and libraries left out):", file=sys.stderr)
        print(frames, file=sys.stderr)
    print(f"{source}: the module cannot be built; nothing was started.", file=sys.stderr)
    return None
